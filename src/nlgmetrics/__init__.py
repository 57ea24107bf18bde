"""nlgmetrics: fast, reference-exact evaluation metrics for text generation.

>>> import nlgmetrics
>>> isinstance(nlgmetrics.__version__, str)
True
"""

__version__ = "0.1.0"
