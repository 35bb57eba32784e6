"""Bodies: ground, rigid bodies (Newton-Euler with Euler parameters), markers."""
