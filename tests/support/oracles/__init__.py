"""Independent oracles for the parity tests: naive re-implementations written from the papers,
and harnesses that run the reference implementations (blanc, the FFLM authors' loop, torchmetrics)
on our weights. Test modules and benchmarks import them from here; no test module imports another.
"""
