# DEV ONLY (not committed): the Python reference behind njit signatures, until shipment.py lands.
import numba
import numpy as np
from .. import payment, shipping
from ..cards import resolve
from ..actions import MAX_PAYMENT_OPTIONS

CARDS = resolve(None)

def _bits(ids, out):
    out[:] = 0
    for c in ids:
        out[c // 64] |= np.int64(1) << np.int64(c % 64)

def _feasible_py(res, con):
    return shipping.can_fulfil(CARDS, res.tolist(), con.tolist())

def _options_py(res, con, out):
    opts = payment.payment_options(CARDS, res.tolist(), con.tolist())[:MAX_PAYMENT_OPTIONS]
    for k, o in enumerate(opts):
        _bits(o, out[k])
    return len(opts)

def _best_py(res, con, cbits, pbits):
    chosen, paid = shipping.best_fulfilment(CARDS, res.tolist(), con.tolist())
    _bits(chosen, cbits); _bits(paid, pbits)

def _cover_py(hand, shortfall, out):
    from ..engine import _cheapest_cover
    _bits(_cheapest_cover(CARDS, hand.tolist(), int(shortfall)), out)

@numba.njit
def feasible(tab, res, con):
    with numba.objmode(r='boolean'):
        r = _feasible_py(res, con)
    return r

@numba.njit
def payment_options(tab, res, con, out):
    with numba.objmode(r='int64'):
        r = _options_py(res, con, out)
    return r

@numba.njit
def best_fulfilment(tab, res, con, cbits, pbits):
    with numba.objmode():
        _best_py(res, con, cbits, pbits)

@numba.njit
def cheapest_cover(tab, hand, shortfall, out):
    with numba.objmode():
        _cover_py(hand, shortfall, out)
