"""The context table of compiled C functions (``flexmbs.compiled.Table``): each row is an
array's address (numpy's ``ctypes.data``) and its shape padded to four entries; arrays a
C function cannot read by that row are refused."""
import numpy as np
import pytest

from flexmbs.compiled import Table


@pytest.mark.parametrize("shape", [(), (3,), (2, 5), (2, 3, 4), (1, 2, 3, 2)])
@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_row_is_address_and_padded_shape(shape, dtype):
    a = np.zeros(shape, dtype=dtype)
    tab = Table()
    tab.add_value(12345)
    assert tab.add(a) == 1
    row = tab.array[1]
    assert row[0] == a.ctypes.data
    assert list(row[1:]) == [*shape, *[0] * (4 - len(shape))]
    assert list(tab.array[0]) == [12345, 0, 0, 0, 0]
    assert tab.address == tab.array.ctypes.data and len(tab) == 2


@pytest.mark.parametrize("a", [np.zeros(3, dtype=np.float32), np.zeros(3, dtype=np.int32),
                               np.zeros((4, 4))[:, 1], np.zeros((3, 4), order="F"),
                               np.zeros((1, 1, 1, 1, 2))],
                         ids=["float32", "int32", "strided", "fortran", "5-d"])
def test_refuses_what_the_row_cannot_describe(a):
    with pytest.raises(TypeError, match="C-contiguous float64/int64 array of ndim <= 4"):
        Table().add(a)
