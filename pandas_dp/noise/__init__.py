"""Noise: how exact values become private ones.

:mod:`~pandas_dp.noise.plans` calibrates a vector's noise from public facts;
:mod:`~pandas_dp.noise.bounding` adds it and bounds the output (BIT, calibrated
truncation, none); :mod:`~pandas_dp.noise.partition` selects private group keys;
:mod:`~pandas_dp.noise.mechanisms` holds the samplers and their calibration, and
knows nothing of pandas.
"""
