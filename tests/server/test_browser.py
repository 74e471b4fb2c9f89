"""A student's path through `arena serve` in a real headless browser (Debian's chromium through selenium, as the
report's test): log in, submit a bot, see it validated, see it on the leaderboard after the league played it,
its pictures drawn, and one of its games replayed on the board (the report's viewer, served from the site).
"""
from __future__ import annotations

import time

import pytest

from tests.browser import browser
from tests.server.support import PLAIN, RAISER, Client, Server, accounts, make_league, wait_idle

pytestmark = pytest.mark.xdist_group("server")


@pytest.mark.slow
def test_log_in_submit_see_it_validated_and_on_the_leaderboard(tmp_path):
    make_league(tmp_path)
    tokens = accounts(tmp_path, "alice")
    (tmp_path / "alice.py").write_text(PLAIN)
    b = browser(tmp_path)  # (skips, saying why, where chromium is not installed)
    from selenium.webdriver.common.by import By
    server = Server(tmp_path).start()
    try:
        b.get(server.base + "/login")
        b.find_element(By.ID, "name").send_keys("alice")
        b.find_element(By.ID, "token").send_keys(tokens["alice"])
        b.find_element(By.ID, "login").click()
        deadline = time.monotonic() + 30
        while not b.current_url.endswith("/me"):  # (the click returns before the redirect is followed)
            assert time.monotonic() < deadline, b.find_element(By.TAG_NAME, "body").text
            time.sleep(0.2)
        assert "Nothing submitted yet" in b.page_source
        b.get(server.base + "/submit")
        b.find_element(By.ID, "file").send_keys(str(tmp_path / "alice.py"))
        b.find_element(By.ID, "send").click()
        deadline = time.monotonic() + 120
        while not ("/me?sent=" in b.current_url and b.find_elements(By.CSS_SELECTOR, "#submissions .status")
                   and "accepted" in b.find_element(By.CSS_SELECTOR, "#submissions .status").text):
            assert time.monotonic() < deadline, b.find_element(By.TAG_NAME, "body").text
            time.sleep(0.5)  # (no reload by hand: the page follows the verdict, test_the_me_page_follows_...)
        wait_idle(tmp_path)  # every game stored; the ratings' fold may still be a second behind (the writer puts it
        deadline = time.monotonic() + 30  # off while results come), and the board shows the rated games: reload
        while True:
            b.get(server.base + "/")
            rows = {r.find_elements(By.TAG_NAME, "td")[1].text: r for r in
                    b.find_elements(By.CSS_SELECTOR, "#leaderboard tr") if r.find_elements(By.TAG_NAME, "td")}
            if int(rows["alice"].find_element(By.CLASS_NAME, "games").text) > 0:
                break
            assert time.monotonic() < deadline, "alice's games never reached the leaderboard"
            time.sleep(0.5)
        assert b.find_elements(By.CSS_SELECTOR, "svg.h2h rect")  # the head-to-head matrix is drawn
        b.find_element(By.LINK_TEXT, "alice").click()
        assert b.find_element(By.CSS_SELECTOR, "svg.rating polyline").size["width"] > 0
        assert b.find_elements(By.CSS_SELECTOR, "svg.moves rect")
        assert b.find_elements(By.CSS_SELECTOR, "#h2h tbody tr")  # the report's head-to-head table
        b.find_element(By.CSS_SELECTOR, "#games tbody a").click()  # one of alice's games: its replay, with the board
        deadline = time.monotonic() + 20
        while "game " not in b.find_element(By.ID, "title").text:
            assert time.monotonic() < deadline, b.find_element(By.TAG_NAME, "body").text
            time.sleep(0.1)
        moves = b.find_elements(By.CSS_SELECTOR, "#moves li")
        last = b.find_element(By.ID, "board").text
        assert moves and last and "current" in moves[-1].get_attribute("class")
        b.find_element(By.ID, "first").click()
        assert b.find_element(By.ID, "board").text not in ("", last)
        assert "move 0 of" in b.find_element(By.ID, "step").text
        errors = [e for e in b.get_log("browser") if "Content Security Policy" in e.get("message", "")]
        assert not errors  # nothing on the pages needs more than the policy allows
    finally:
        b.quit()
        server.stop()


SLOW_START = PLAIN.replace("        self.rng = random.Random(seed)",
                           "        import time\n        time.sleep(2)\n        self.rng = random.Random(seed)")


@pytest.mark.slow
def test_the_me_page_follows_the_verdict_without_a_reload_by_hand(tmp_path):
    """After an upload the page says "received, validating" and turns to the verdict by itself (status.js polls
    the JSON API under the CSP, no inline script); the reason of a refusal appears the same way."""
    make_league(tmp_path)
    tokens = accounts(tmp_path, "alice")
    (tmp_path / "alice.py").write_text(SLOW_START)
    (tmp_path / "broken.py").write_text(SLOW_START.replace("return self.rng.choice(state.legal_actions())",
                                                           "return [][1]"))
    b = browser(tmp_path)
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    server = Server(tmp_path).start()
    try:
        b.get(server.base + "/login")
        b.find_element(By.ID, "name").send_keys("alice")
        b.find_element(By.ID, "token").send_keys(tokens["alice"])
        b.find_element(By.ID, "login").click()
        for name, verdict in (("alice.py", "accepted"), ("broken.py", "refused")):
            deadline = time.monotonic() + 30
            while not b.current_url.endswith("/me"):
                assert time.monotonic() < deadline, b.find_element(By.TAG_NAME, "body").text
                time.sleep(0.2)
            b.get(server.base + "/submit")
            b.find_element(By.ID, "file").send_keys(str(tmp_path / name))
            b.find_element(By.ID, "send").click()
            seen = []
            deadline = time.monotonic() + 120
            while True:  # (the page loads itself again once the verdict is in: an element read may go stale)
                assert time.monotonic() < deadline, (seen, b.find_element(By.TAG_NAME, "body").text)
                try:
                    banner = b.find_elements(By.ID, "sent")
                    text = banner[0].text if banner else ""
                except StaleElementReferenceException:
                    continue
                if text and (not seen or seen[-1] != text):
                    seen.append(text)
                if verdict in text and (verdict != "refused" or "IndexError" in text):  # (the reason: after the load)
                    break
                time.sleep(0.2)
            assert "received, validating" in " ".join(seen) or "received, waiting" in " ".join(seen), seen
            b.get(server.base + "/me")
        errors = [e for e in b.get_log("browser") if "Content Security Policy" in e.get("message", "")]
        assert not errors, errors
    finally:
        b.quit()
        server.stop()


@pytest.mark.slow
def test_every_page_works_at_phone_width(tmp_path):
    """At 375 px wide (a phone) no page scrolls sideways as a whole: a wide table scrolls in its own box, pictures
    and tracebacks fit; the pages an organiser and a student read, with long names and a refusal's traceback."""
    make_league(tmp_path)
    tokens = accounts(tmp_path, "a_student_with_a_rather_long_name", "bob")
    tokens.update(accounts(tmp_path, "prof", organiser=True))
    server = Server(tmp_path).start()
    c = Client(server.base)
    code, doc = c.submit_api(tokens["a_student_with_a_rather_long_name"], "a_long_file_name_for_a_bot.py",
                             PLAIN.encode())
    assert code == 202
    c.wait(tokens["a_student_with_a_rather_long_name"], doc["id"], {"accepted"})
    code, bad = c.submit_api(tokens["bob"], "bob.py", RAISER.encode())
    c.wait(tokens["bob"], bad["id"], {"refused"})
    wait_idle(tmp_path)
    b = browser(tmp_path)
    from selenium.webdriver.common.by import By
    try:
        b.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                          {"width": 375, "height": 800, "deviceScaleFactor": 1, "mobile": False})
        problems = {}
        for who in ("prof", "bob"):
            b.delete_all_cookies()
            b.get(server.base + "/login")
            b.find_element(By.ID, "name").send_keys(who)
            b.find_element(By.ID, "token").send_keys(tokens[who])
            b.find_element(By.ID, "login").click()
            deadline = time.monotonic() + 30
            while "/me" not in b.current_url:
                assert time.monotonic() < deadline
                time.sleep(0.2)
            paths = ["/", "/me", "/submit", "/guide"] + (["/admin", "/admin/submissions/1"] if who == "prof" else [])
            if who == "prof":
                b.get(server.base + "/")
                paths.append(b.find_element(By.CSS_SELECTOR, "#leaderboard a").get_attribute("pathname"))
            for path in paths:
                b.get(server.base + path)
                found = b.execute_script("""
                    const out = [], W = window.innerWidth;
                    if (document.documentElement.scrollWidth > W + 1)
                      out.push('page ' + document.documentElement.scrollWidth + ' > ' + W);
                    const boxed = el => {  // inside a box that scrolls sideways (and itself fits)
                      for (let p = el.parentElement; p; p = p.parentElement)
                        if (['auto', 'scroll'].includes(getComputedStyle(p).overflowX)) return true;
                      return false;
                    };
                    for (const el of document.querySelectorAll('table, pre, svg.pic')) {
                      const r = el.getBoundingClientRect();
                      if (r.right > W + 1 && !boxed(el)) out.push(el.tagName + '#' + el.id + ' ends at ' + r.right);
                    }
                    for (const th of document.querySelectorAll('th')) {  // a one-word heading is never cut in two
                      const word = th.textContent.trim(), range = document.createRange();
                      range.selectNodeContents(th);
                      const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
                      if (word && !/\\s/.test(word) && lines.size > 1) out.push('heading cut: ' + word);
                    }
                    return out;""")
                if found:
                    problems[f"{who} {path}"] = found
        assert not problems, problems
    finally:
        b.quit()
        server.stop()


SLOW_MOVES = PLAIN.replace("        return self.rng.choice(state.legal_actions())",
                           "        import time\n        time.sleep(0.5)\n"
                           "        return self.rng.choice(state.legal_actions())")
BRACKET_LEAGUE = '''name = "cup"
games = ["nim(n=9)"]
games_per_pairing = 2
seed = 1
format = "knockout"
database = "srv.sqlite"
[limits]
move_time = 3.0
first_move_time = 20.0
[[bots]]
name = "top seed"
spec = "random"
[[bots]]
name = "</script><script>window.pwned=1</script>"
file = "slow.py"
[[bots]]
name = "slow &\\"'"
file = "slow.py"
'''


@pytest.mark.slow
def test_the_bracket_page_follows_the_tournament_as_its_matches_end(tmp_path):
    """A knockout of three (the top seed has a bye; the other two play, then the final) whose bots take half a
    second a move: /bracket, opened before the first match ends, shows that match's result, then the final's, and
    the places, by itself (bracket.js polls /api/bracket under the CSP): the page is never loaded again."""
    make_league(tmp_path, BRACKET_LEAGUE)
    (tmp_path / "slow.py").write_text(SLOW_MOVES)
    b = browser(tmp_path)
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    server = Server(tmp_path).start()
    try:
        b.get(server.base + "/")
        b.find_element(By.CSS_SELECTOR, "#bracket-link a").click()  # the leaderboard links to the bracket
        assert b.current_url == server.base + "/bracket"
        b.execute_script("window.arenaTestMark = 1")  # gone if the page were loaded again

        def boxes() -> dict[str, str]:
            return {g.get_attribute("data-match"): g.get_attribute("class")
                    for g in b.find_elements(By.CSS_SELECTOR, "#tournament svg g.match")}

        first = boxes()  # (empty while the server has not started the tournament: "Not started")
        assert not first or (first["R1-2"] in ("match waiting", "match playing") and first["R2"] == "match waiting"), \
            first
        seen = [first]
        deadline = time.monotonic() + 180
        while True:
            assert time.monotonic() < deadline, (seen, server.output())
            try:
                now, places = boxes(), [li.text for li in b.find_elements(By.CSS_SELECTOR, "#placings li")]
            except StaleElementReferenceException:  # (the section was just replaced)
                continue
            if now != seen[-1]:
                seen.append(now)
            if now.get("R2") == "match done" and len(places) == 3:
                break
            time.sleep(0.2)
        # the final waited for the first match's winner, whose end was shown while the final was still to be played
        assert any(s.get("R2") == "match waiting" for s in seen), seen
        assert any(s.get("R1-2") == "match done" and s.get("R2") in ("match waiting", "match playing")
                   for s in seen), seen
        assert b.execute_script("return window.arenaTestMark") == 1  # followed without a reload
        assert b.execute_script("return window.pwned === undefined")  # the hostile name stayed text
        assert "</script><script>window.pwned=1</script>" in places  # (second or third: shown as it is)
        assert b.find_element(By.ID, "tournament").get_attribute("data-finished") == "yes"
        assert "finished" in b.find_element(By.ID, "tournament-state").text
        errors = [e for e in b.get_log("browser") if "Content Security Policy" in e.get("message", "")]
        assert not errors, errors
        b.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",  # a phone: the bracket scrolls in its own box
                          {"width": 375, "height": 800, "deviceScaleFactor": 1, "mobile": False})
        b.get(server.base + "/bracket")
        assert b.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")
        box = b.find_element(By.CSS_SELECTOR, ".bracket-box")
        assert b.execute_script("return arguments[0].scrollWidth > arguments[0].clientWidth", box)  # drawn whole
    finally:
        b.quit()
        server.stop()
