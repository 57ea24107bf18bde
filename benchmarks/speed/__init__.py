"""Each metric against its anchor, on the same inputs, with the numbers compared (one module each):

==============  =====================================================================
text.py         the text metrics' report: rouge.py, bleu.py, chrf.py, ter.py
rouge.py        ROUGE vs rouge-score
bleu.py         BLEU vs sacrebleu
chrf.py         chrF / chrF++ vs sacrebleu
ter.py          TER vs sacrebleu
infolm.py       InfoLM vs torchmetrics InfoLM
shannon.py      Shannon score vs blanc ``Shannon``
blanc.py        BLANC-help vs blanc ``BlancHelp``
fflm.py         FFLM vs the authors' per-example loop
==============  =====================================================================

Each has a ``run(...) -> list[dict]`` and a command line (``python -m benchmarks.speed.<name>``);
``python -m benchmarks.speed`` runs them side by side (``side_by_side.py``).
"""
