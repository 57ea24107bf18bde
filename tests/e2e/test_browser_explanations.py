"""The explanation panel of the four LM demos (Shannon, FFLM, BLANC, InfoLM), in headless Chromium.

Each demo is served in-process on a tiny local model; the browser types the texts, clicks the
button, and the panel under the score (``#explanation``) must show every token of the library's
breakdown with its exact value (``data-value``, Python's repr) and the same score. A screenshot
of each panel goes to ``explain_<metric>.png`` in a temporary folder, or in $NLGMETRICS_SCREENSHOTS
(``benchmarks/results/screenshots`` refreshes the committed ones).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.browser_support import WAIT_S

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:.*(no_silent_downcasting|copy keyword).*"),
]

SUMMARY = "Jack bought fresh milk at the bazaar."
DOCUMENT = ("Jack drove his old car to the bazaar on Monday. He bought fresh milk and two apples there. "
            "The milk was cheap.")
PREDICTION = "the cat sat on the mat"
REFERENCE = "a cat was sitting on the mat"


def _panel(driver, url: str, first: str, second: str, second_id: str, metric: str, screenshots: Path):
    """Type, submit, wait for the panel; return the page's tokens of the main breakdown, its score."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(url)
    wait = WebDriverWait(driver, WAIT_S)
    wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#prediction textarea")).send_keys(first)
    driver.find_element(By.CSS_SELECTOR, f"#{second_id} textarea").send_keys(second)
    driver.find_element(By.CSS_SELECTOR, "#submit").click()

    def ready(d):
        errors = [e.text for e in d.find_elements(By.CSS_SELECTOR, ".toast-body") if e.text]
        if errors:
            raise AssertionError(f"demo error: {errors}")
        return d.find_elements(By.CSS_SELECTOR, "#explanation .nlgm-explain") or None

    sections = wait.until(ready)
    main = sections[0]  # the result's main score comes first
    tokens = [(int(t.get_attribute("data-index")), float(t.get_attribute("data-value")), t.text)
              for t in main.find_elements(By.CSS_SELECTOR, ".nlgm-tok")]
    score = float(main.find_element(By.CSS_SELECTOR, ".nlgm-score").get_attribute("data-score"))
    page_score = float(driver.find_element(By.CSS_SELECTOR, "#score textarea").get_attribute("value"))
    driver.execute_script("arguments[0].scrollIntoView();", main)
    driver.find_element(By.CSS_SELECTOR, "#explanation").screenshot(str(screenshots / f"explain_{metric}.png"))
    return tokens, score, page_score, main.get_attribute("data-name")


def _check(tokens, score, page_score, name, result):
    breakdown = result.explanations[0][result.main]
    # Two runs of the same model (the demo's, the test's): equal up to float noise of the CPU kernels.
    assert name == result.main and score == page_score
    assert score == pytest.approx(result.main_score, abs=1e-12) and result.main_score == breakdown.score
    assert sorted(i for i, _, _ in tokens) == list(range(len(breakdown.spans)))
    values = breakdown.values if breakdown.values is not None else breakdown.columns["weight"]
    for index, value, text in tokens:
        assert value == pytest.approx(values[index], abs=1e-12)
        assert text.strip() == breakdown.tokens[index].strip()  # the browser trims the edges
    return breakdown


def test_shannon_panel(browser, serve, screenshots, tiny_gpt2_dir):  # noqa: F811 - pytest fixtures
    from nlgmetrics.shannon import shannon_score

    url = serve("shannon_score", model=str(tiny_gpt2_dir), device="cpu")
    got = _panel(browser, url, SUMMARY, DOCUMENT, "source", "shannon_score", screenshots)
    want = shannon_score([SUMMARY], [DOCUMENT], model=str(tiny_gpt2_dir), device="cpu", progress=False, explain=True)
    breakdown = _check(*got, want)
    assert len(got[0]) == len(breakdown.spans) == want.num_doc_tokens[0]


def test_fflm_panel(browser, serve, screenshots, tiny_llama_dir):  # noqa: F811
    from nlgmetrics.fflm import fflm

    url = serve("fflm", model=str(tiny_llama_dir), device="cpu")
    got = _panel(browser, url, SUMMARY, DOCUMENT, "source", "fflm", screenshots)
    want = fflm([SUMMARY], [DOCUMENT], model=str(tiny_llama_dir), device="cpu", progress=False, explain=True)
    _check(*got, want)


def test_blanc_panel(browser, serve, screenshots, copy_bert_dir):  # noqa: F811
    from nlgmetrics.blanc import blanc

    summary = "Tomatoes tomatoes tomatoes everywhere tomatoes."
    document = ("Potatoes potatoes potatoes grow slowly in winter. The farmer planted tomatoes near the "
                "river. Tomatoes need sunshine and tomatoes need water.")
    url = serve("blanc", model=str(copy_bert_dir), device="cpu")
    got = _panel(browser, url, summary, document, "source", "blanc", screenshots)
    want = blanc([summary], [document], model=str(copy_bert_dir), device="cpu", progress=False, explain=True)
    breakdown = _check(*got, want)
    assert any(v > 0 for v in breakdown.values)  # the summary helped somewhere: a shaded token


def test_infolm_panel(browser, serve, screenshots, tiny_bert_dir):  # noqa: F811
    from nlgmetrics.infolm import infolm

    url = serve("infolm", model=str(tiny_bert_dir), device="cpu")
    got = _panel(browser, url, PREDICTION, REFERENCE, "reference", "infolm", screenshots)
    want = infolm([PREDICTION], [REFERENCE], model=str(tiny_bert_dir), device="cpu", progress=False, explain=True)
    breakdown = _check(*got, want)
    assert breakdown.aggregation == "none"  # the default Fisher-Rao distance: weights shown
