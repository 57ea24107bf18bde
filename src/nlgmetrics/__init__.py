"""nlgmetrics: fast, reference-exact evaluation metrics for text generation.

>>> import nlgmetrics
>>> isinstance(nlgmetrics.__version__, str)
True
"""

__version__ = "0.1.0"

# Nothing else: each metric is imported from its package (``from nlgmetrics.bleu import bleu``),
# so that ``import nlgmetrics`` never imports torch.
__all__ = ["__version__"]
