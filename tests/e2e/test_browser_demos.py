"""The Gradio demos of rouge_family, bleu and infolm, driven in headless Chromium.

Each demo is served locally (in this process, on a free port; InfoLM on the tiny local BERT), a
real browser types a prediction and a reference, clicks the button, and the score printed on the
page must equal the library's number for the same texts (and the signature must match).
One Chromium is started for the whole module. Skipped only when Chromium / chromedriver /
selenium are missing (CI installs them: scripts/install.sh --test).
"""

from __future__ import annotations


import pytest

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    # Gradio 6.31's queue calls pandas options that pandas 3 deprecates; not ours to fix.
    pytest.mark.filterwarnings("ignore:.*(no_silent_downcasting|copy keyword).*"),
]

from tests.support.browser_support import WAIT_S, set_input


def _page_score(driver, url: str, prediction: str, reference: str, *, click: tuple[str, ...] = (),
                label: str | None = None) -> tuple[float, str]:
    """Open the demo, type both texts, click the options in ``click``, submit, read the result
    (and, with ``label``, wait for the score box's label, written from the result, to read it)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(url)
    wait = WebDriverWait(driver, WAIT_S)
    box = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#prediction textarea"))
    box.send_keys(prediction)
    driver.find_element(By.CSS_SELECTOR, "#reference textarea").send_keys(reference)
    if click:
        driver.find_element(By.CSS_SELECTOR, "#options button").click()  # open the accordion
        for selector in click:
            set_input(wait, selector, is_set=lambda box: box.is_selected(), apply=lambda box: box.click())
    driver.find_element(By.CSS_SELECTOR, "#submit").click()

    def result(d):
        errors = [e.text for e in d.find_elements(By.CSS_SELECTOR, ".toast-body") if e.text]
        if errors:  # the demo turned a library error into a toast: fail now, with its message
            raise AssertionError(f"demo error: {errors}")
        return d.find_element(By.CSS_SELECTOR, "#score textarea").get_attribute("value") or None

    score = wait.until(result)
    signature = driver.find_element(By.CSS_SELECTOR, "#signature textarea").get_attribute("value")
    if label is not None:
        wait.until(lambda d: label in d.find_element(By.CSS_SELECTOR, "#score").text)
    return float(score), signature


PREDICTION = "The quick brown foxes jumped over the lazy dog."
REFERENCE = "A quick brown fox jumps over the lazy dog."
SECOND_REFERENCE = "The fast brown fox leaped over a sleepy dog."


def test_rouge_family_demo(browser, serve):
    from nlgmetrics.rouge import rouge_family

    url = serve("rouge_family")
    # Stemming on (a checkbox inside the options accordion): foxes/fox and jumped/jumps then match.
    got, signature = _page_score(browser, url, PREDICTION, REFERENCE, click=("#option-use_stemmer input",),
                                 label="rouge1 (higher is better)")
    want = rouge_family([PREDICTION], [[REFERENCE]], use_stemmer=True)
    assert got == want.main_score == want.aggregate()["rouge1"]  # the first default type is the main score
    assert signature == want.signature
    unstemmed = rouge_family([PREDICTION], [[REFERENCE]]).main_score
    assert got != unstemmed  # the option really reached the library


def test_bleu_demo_with_two_references(browser, serve):
    from nlgmetrics.bleu import bleu

    url = serve("bleu")
    got, signature = _page_score(browser, url, PREDICTION, f"{REFERENCE}\n---\n{SECOND_REFERENCE}")
    want = bleu([PREDICTION], [[REFERENCE, SECOND_REFERENCE]])
    assert got == want.main_score
    assert signature == want.signature
    assert got != bleu([PREDICTION], [[REFERENCE]]).main_score  # both references were used


def test_infolm_demo_on_tiny_bert(browser, serve, tiny_bert_dir):
    from nlgmetrics.infolm import infolm

    url = serve("infolm", model=str(tiny_bert_dir), device="cpu")
    got, signature = _page_score(browser, url, PREDICTION, REFERENCE, label="infolm (lower is better)")
    want = infolm([PREDICTION], [REFERENCE], model=str(tiny_bert_dir), device="cpu", progress=False)
    assert got == pytest.approx(want.scores["infolm"][0], abs=1e-12)
    assert signature == want.signature
