"""
Identification of a robot's dynamic model from moving data (no ROS here).

* :mod:`.static`: the gravity parameters (mass, first moments) from a still robot's
  holding torques;
* :mod:`.least_change`: the one least-change solver and rank rule both fits use;
* :mod:`.passes`: the dynamic fit repeated until the rows' power-flow directions settle;
* :mod:`.signals`: uniform resampling, a zero-phase low-pass and its derivatives;
* :mod:`.dynamic`: the motor-side regressor through the transmissions, its square-root
  normal equations per bag, and the fit (base parameters, rotors, friction, efficiencies);
* :mod:`.excitation`: periodic Fourier-series excitations within every joint and motor limit.

doc/identify_dynamics.md says what is identified and how.
"""
