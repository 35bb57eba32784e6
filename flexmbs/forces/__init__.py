"""Force elements (THEORY §5.7): force laws and their generalized forces, one file each."""
