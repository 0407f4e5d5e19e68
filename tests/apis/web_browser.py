"""Drive the web demo in headless Chromium (Debian's chromium and chromium-driver) through Selenium.

Run by tests/apis/test_web_demo.py with the web venv's Python (selenium lives there)::

    python -m tests.apis.web_browser URL PHOTO [SCREENSHOT]

Loads the page, ticks the seg and normal tiny models besides the default pose one, uploads the photo, runs, and waits
for the result pictures. Prints one JSON line: the pictures shown, the result files offered and every URL the page
requested outside the server (must be none: the demo works with no network).
"""
import json
import shutil
import sys
from typing import List

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

EXTRA_MODELS = ('seg-tiny', 'normal-tiny')
TIMEOUT = 240


def chromium() -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which('chromium')
    for argument in ('--headless=new', '--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu',
                     '--window-size=1200,980', '--hide-scrollbars'):
        options.add_argument(argument)
    options.set_capability('goog:loggingPrefs', {'performance': 'ALL'})
    return webdriver.Chrome(service=Service(shutil.which('chromedriver')), options=options)


def requested_urls(driver: webdriver.Chrome) -> List[str]:
    urls = []
    for entry in driver.get_log('performance'):
        message = json.loads(entry['message'])['message']
        if message['method'] == 'Network.requestWillBeSent':
            urls.append(message['params']['request']['url'])
    return urls


def main(url: str, photo: str, screenshot: str = '') -> None:
    driver = chromium()
    try:
        driver.get(url)
        wait = WebDriverWait(driver, TIMEOUT)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, '#photo input[type=file]'))
        for alias in EXTRA_MODELS:
            driver.find_element(By.XPATH, f"//*[@id='models']//label[contains(., '{alias}')]").click()
        driver.find_element(By.CSS_SELECTOR, '#photo input[type=file]').send_keys(photo)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, '#photo img'))  # the upload's preview
        driver.find_element(By.ID, 'run-photo').click()
        loaded = ("return Array.from(document.querySelectorAll('#pictures img'))"
                  '.filter(i => i.complete && i.naturalWidth > 0).length')
        wait.until(lambda d: d.execute_script(loaded) >= 1 + len(EXTRA_MODELS))
        files = ("return Array.from(document.querySelectorAll('#results a'))"
                 ".map(a => decodeURIComponent(a.href.split('/').pop()))")
        wait.until(lambda d: any(name.endswith('_results.zip') for name in d.execute_script(files)))
        if screenshot:  # of the whole page
            driver.set_window_size(1200, driver.execute_script(
                'return document.documentElement.scrollHeight + window.outerHeight - window.innerHeight'))
            driver.save_screenshot(screenshot)
        base = url.rstrip('/')
        print(json.dumps(dict(
            pictures=driver.execute_script(loaded),
            files=driver.execute_script(files),
            status=driver.find_element(By.ID, 'status').text,
            threshold=bool(driver.find_elements(By.CSS_SELECTOR, '#kpt-thr input')),
            external=[u for u in requested_urls(driver) if not u.startswith((base, 'data:', 'blob:'))])))
    finally:
        driver.quit()


if __name__ == '__main__':
    main(*sys.argv[1:])
