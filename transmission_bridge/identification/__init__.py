"""
Identification of a robot's dynamic model from moving data (no ROS here).

* :mod:`.signals`: uniform resampling, a zero-phase low-pass and its derivatives;
* :mod:`.dynamic`: the motor-side regressor through the transmissions, its square-root
  normal equations per bag, and the fit (base parameters, rotors, friction, efficiencies);
* :mod:`.excitation`: periodic Fourier-series excitations within every joint and motor limit.

doc/identify_dynamics.md says what is identified and how.
"""
