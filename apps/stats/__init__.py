"""Statistics Relevo's numbers rest on, pure (numpy, no Django): agreement between
graders (agreement.py) and the paired comparison of two evaluations (paired.py). Any
layer may use them: the insights pages, and the AI judges' calibration."""
