"""Named tolerances used by the tests (relative unless said otherwise)."""

# Round trips and power balance of the transmission maps: a few ulps of the largest term.
ROUND_TRIP_RTOL = 1e-12
ROUND_TRIP_ATOL = 1e-12
POWER_RTOL = 1e-12
# Agreement with an independent implementation (Pinocchio) on poses and gravity.
PEER_ATOL = 1e-9
# Agreement with Pinocchio on dynamics (torques, mass matrices, accelerations): relative to
# the larger of 1 and the largest entry of the oracle's output.
PEER_RTOL = 1e-9
# Finite-difference checks (central differences, step 1e-6): truncation plus rounding.
FD_ATOL = 1e-6
# The transmission set's compiled maps (x[i0] c0 + x[i1] c1, coefficients from the formulas)
# against each transmission's own formulas: rounding differs by a few ulps of a term.
COMPILED_RTOL = 1e-14
COMPILED_ATOL = 1e-12
