"""Rotation algebra, marker frames and their second-order jets, relative measures of two
frames and time functions: numpy references beside their compiled kernels
(``rotation_kernel``/``rotation_reference``, ``frame_kernel``/``frame_reference``)."""
