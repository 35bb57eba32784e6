"""Rotation algebra and second-order jets of marker kinematics (numpy only)."""
