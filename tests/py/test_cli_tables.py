"""The command line built from option tables: every verb's usage, man page and shell completion list the
options of its table; `--opt=value` and `--opt value` mean the same; unknown options and windows outside
the trace are usage errors (exit 2); --submits is the one name of a submission window (--submit, the
former name, still works)."""
import json
import sqlite3
import subprocess

import pytest

# The options each verb had before the tables, under the names users know (the table may add more).
KNOWN = {
    "info": ["--json", "--quick", "--follow"],
    "dump": ["--jsonl", "--seq", "--type", "--follow"],
    "verify": ["--salvage", "--quiet", "--json", "--follow"],
    "repack": ["--level", "--chunk-size", "--threads", "--stored", "--quiet"],
    "synth": ["--output", "--shape", "--submits", "--bytes", "--channels", "--memory-pages", "--seed", "--level",
              "--threads", "--chunk-size", "--stored", "--no-trailer", "--crash-safe", "--memory-cas"],
    "slice": ["--submits", "--level", "--chunk-size", "--quiet"],
    "decode": ["--jsonl", "--submits", "--channel", "--method", "--no-fields", "--no-events", "--expand-macros", "--quiet",
               "--follow"],
    "census": ["--json", "--total", "--submits", "--channel", "--no-macros", "--stores", "--quiet", "--follow"],
    "db": ["--output", "--with-bytes", "--no-fields", "--index-methods", "--submits", "--channel", "--no-macros",
           "--stores", "--quiet", "--follow"],
    "draws": ["--json", "--draw", "--submits", "--channel", "--no-launches", "--follow"],
    "mme": ["--json", "--macro", "--submits", "--channel", "--calls", "--expand", "--no-disasm", "--follow"],
    "record": ["--output", "--crash-safe", "--memory", "--track", "--level", "--quiet", "--live", "--live-policy",
               "--replay", "--check", "--latency", "--no-memory-cas"],
    "ingest": ["--output", "--follow", "--level"],
    "replay": ["--backend", "--lane", "--submits", "--prefix", "--check", "--min-coverage", "--dump", "--dump-rt",
               "--expect-hash", "--list-rt", "--census", "--census-json", "--submit-timeout", "--no-wait",
               "--reserved-va", "--subcontexts", "--relocate", "--plan", "--force", "--json", "--quiet", "--verbose",
               "--follow", "--live", "--latency"],
    "corpus": ["--verbose", "--quiet"],
    "timeline": ["--output", "--no-cpu", "--quiet", "--follow"],
    "report": ["--output", "--backend", "--no-replay", "--quiet", "--follow"],
    "launches": ["--json", "--launch", "--bytes", "--submits", "--channel", "--follow"],
    "decompile": ["--launch", "--submits", "--output", "--follow"],
}


def verbs(vgt):
    return vgt("verbs", check=0).stdout.split()


def table(vgt, verb):
    """The long options of the verb's table, as `vgt __options VERB` lists them."""
    return [line.split()[0] for line in vgt("__options", verb, check=0).stdout.splitlines()]


@pytest.fixture(scope="module")
def t20(synth):
    return synth("twenty", "--shape", "mixed", "--submits", "20", "--seed", "3")


def test_every_verb_is_known_and_keeps_its_options(vgt):
    assert sorted(verbs(vgt)) == sorted(KNOWN)
    for verb, names in KNOWN.items():
        assert set(names) <= set(table(vgt, verb)), verb


def test_help_lists_every_table_option(vgt):
    for verb in verbs(vgt):
        out = vgt(verb, "--help", check=0).stdout
        assert out.startswith(f"usage: vgt {verb}"), out[:200]
        for opt in table(vgt, verb):
            assert opt in out, f"vgt {verb} --help does not mention {opt}"


def test_unknown_options_are_usage_errors_everywhere(vgt):
    for verb in verbs(vgt):
        r = vgt(verb, "--no-such-option", "x", "y", check=2)
        assert f"vgt {verb}: unknown option '--no-such-option'" in r.stderr, r.stderr


def test_a_flag_takes_no_value_and_a_value_option_needs_one(vgt, t20):
    r = vgt("info", "--json=1", t20, check=2)
    assert "--json takes no value" in r.stderr
    r = vgt("decode", t20, "--submits", check=2)
    assert "--submits needs a value" in r.stderr


def test_double_dash_ends_the_options(vgt_bin, t20, tmp_path):
    odd = tmp_path / "-odd.vgt"
    odd.write_bytes(t20.read_bytes())
    # from tmp_path the argument starts with '-': only '--' makes it a trace, not an option
    r = subprocess.run([str(vgt_bin), "info", "--", "-odd.vgt"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(vgt_bin), "info", "-odd.vgt"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 2 and "unknown option" in r.stderr


# ---- --opt=value and --opt value ----

def same(vgt, *forms):
    outs = [vgt(*args, check=0).stdout for args in forms]
    assert all(o == outs[0] for o in outs), forms
    return outs[0]


def test_equals_and_space_forms_agree(vgt, t20):
    same(vgt, ("dump", t20, "--seq", "3..9", "--type", "GPFIFO_SUBMIT"), ("dump", t20, "--seq=3..9", "--type=GPFIFO_SUBMIT"))
    assert same(vgt, ("decode", t20, "--submits", "2..3", "--no-events"), ("decode", t20, "--submits=2..3", "--no-events"))
    same(vgt, ("decode", t20, "--method", "SEM_*", "--submits", "4"), ("decode", t20, "--method=SEM_*", "--submits=4"))
    same(vgt, ("census", t20, "--json", "--submits", "1..5"), ("census", t20, "--json", "--submits=1..5"))
    same(vgt, ("mme", t20, "--submits", "0..3", "--macro", "1"), ("mme", t20, "--submits=0..3", "--macro=1"))


def test_equals_and_space_forms_agree_for_writers(vgt, t20, tmp_path):
    def info(p):
        return json.loads(vgt("info", p, "--json", check=0).stdout)

    vgt("repack", t20, tmp_path / "a.vgt", "--level", "5", "--chunk-size", "8K", check=0)
    vgt("repack", t20, tmp_path / "b.vgt", "--level=5", "--chunk-size=8K", check=0)
    assert (tmp_path / "a.vgt").read_bytes() == (tmp_path / "b.vgt").read_bytes()

    vgt("synth", "-o", tmp_path / "c.vgt", "--submits", "3", "--seed", "4", "--shape", "pushbuf", check=0)
    vgt("synth", f"-o{tmp_path / 'd.vgt'}", "--submits=3", "--seed=4", "--shape=pushbuf", check=0)
    vgt("synth", f"--output={tmp_path / 'e.vgt'}", "--submits=3", "--seed=4", "--shape=pushbuf", check=0)
    assert (tmp_path / "c.vgt").read_bytes() == (tmp_path / "d.vgt").read_bytes() == (tmp_path / "e.vgt").read_bytes()

    vgt("slice", t20, tmp_path / "f.vgt", "--submits", "2..5", "--level", "7", check=0)
    vgt("slice", t20, tmp_path / "g.vgt", "--submits=2..5", "--level=7", check=0)
    assert (tmp_path / "f.vgt").read_bytes() == (tmp_path / "g.vgt").read_bytes()

    vgt("verify", t20, "--salvage", tmp_path / "h.vgt", "-q", check=0)
    vgt("verify", t20, f"--salvage={tmp_path / 'i.vgt'}", "--quiet", check=0)
    assert info(tmp_path / "h.vgt")["records"] == info(tmp_path / "i.vgt")["records"] > 0

    vgt("db", t20, "-o", tmp_path / "j.sqlite", "--submits", "1..2", "-q", check=0)
    vgt("db", t20, f"--output={tmp_path / 'k.sqlite'}", "--submits=1..2", "--quiet", check=0)
    rows = [sqlite3.connect(tmp_path / n).execute("select count(*) from methods").fetchone() for n in ("j.sqlite", "k.sqlite")]
    assert rows[0] == rows[1] and rows[0][0] > 0


def test_equals_and_space_forms_agree_for_replay(vgt, t20):
    def run(*args):
        j = json.loads(vgt("replay", t20, "--backend", "sim", "--check", "--json", *args, check=0).stdout)
        return {k: v for k, v in j.items() if not k.endswith("_ns") and k != "reports"}
    a = run("--submits", "2..4", "--prefix", "state")
    assert a == run("--submits=2..4", "--prefix=state")
    assert a != run("--submits=2..4")


def test_record_takes_both_forms(vgt, tmp_path):
    # no GPU needed: a program that never opens an NVIDIA node records nothing, the options still parse
    for args in (["--memory", "none", "--track", "hash", "--level", "5"], ["--memory=none", "--track=hash", "--level=5"]):
        r = vgt("record", "-o", tmp_path / "r.vgt", *args, "--", "/bin/true", check=0)
        assert r.returncode == 0
    r = vgt("record", "--level=0", "--", "/bin/true", check=2)
    assert "--level" in r.stderr


# ---- windows ----

def test_submit_is_the_former_name_of_submits(vgt, t20):
    for verb in ("decode", "census", "mme", "draws"):
        assert vgt(verb, t20, "--submit", "3..4", check=0).stdout == vgt(verb, t20, "--submits", "3..4", check=0).stdout


@pytest.mark.parametrize("window", ["50..60", "15..25", "20", "25.."])
@pytest.mark.parametrize("verb", ["decode", "census", "db", "mme", "draws", "replay", "slice"])
def test_submits_outside_the_trace_is_a_usage_error(vgt, t20, tmp_path, verb, window):
    extra = {"db": ["-o", tmp_path / "o.sqlite"], "replay": ["--backend", "sim"], "slice": [tmp_path / "o.vgt"]}
    r = vgt(verb, t20, *extra.get(verb, []), "--submits", window, check=2)
    assert f"--submits {window} is outside the trace: it has 20 submissions (0..19)" in r.stderr, r.stderr
    if verb in ("db", "slice"):
        assert not list(tmp_path.iterdir())   # nothing written


@pytest.mark.parametrize("verb", ["decode", "census", "db", "mme", "draws", "replay", "slice"])
def test_submits_inside_the_trace_is_fine(vgt, t20, tmp_path, verb):
    extra = {"db": ["-o", tmp_path / "o.sqlite"], "replay": ["--backend", "sim"], "slice": [tmp_path / "o.vgt"]}
    for window in ("0..19", "19", "5..", "..19"):
        vgt(verb, t20, *extra.get(verb, []), "--submits", window, check=0)


def test_dump_seq_outside_the_trace_is_a_usage_error(vgt, vgt_bin, t20):
    n = json.loads(vgt("info", t20, "--json", check=0).stdout)["records"]
    for window in (f"{n}..{n + 10}", f"{n - 2}..{n + 2}", f"{n + 5}"):
        r = vgt("dump", t20, "--seq", window, check=2)
        assert f"--seq {window} is outside the trace: it has {n} records (0..{n - 1})" in r.stderr, r.stderr
        # a stream (no index to seek in) finds out at its end, after printing what the window held
        s = subprocess.run([str(vgt_bin), "dump", "-", "--seq", window],
                           stdin=t20.open("rb"), capture_output=True, text=True)
        assert s.returncode == 2 and f"it has {n} records" in s.stderr, s.stderr
    vgt("dump", t20, "--seq", f"{n - 1}", check=0)
    vgt("dump", t20, "--seq", f"0..{n - 1}", check=0)


# ---- generated files ----

def test_man_pages_exist_for_every_verb_and_mention_every_option(vgt, build_dir):
    man1 = build_dir / "share" / "man" / "man1"
    main = (man1 / "vgt.1").read_text()
    for verb in verbs(vgt):
        page = man1 / f"vgt-{verb}.1"
        text = page.read_text()
        assert f"vgt\\-{verb}" in main
        assert text.startswith(".\\\"") and f".TH VGT-{verb.upper()} 1" in text
        for opt in table(vgt, verb):
            assert opt.replace("-", "\\-") in text, f"{page.name} does not mention {opt}"
        # the page is what `vgt __man VERB` prints, and it renders without a formatter warning
        assert vgt("__man", verb, check=0).stdout == text
        r = subprocess.run(["groff", "-man", "-Tutf8", "-z", str(page)], capture_output=True, text=True)
        # (a long JSON example is one word: the formatter may not fill its line, which is no mistake)
        problems = [l for l in r.stderr.splitlines() if "cannot adjust line" not in l]
        assert r.returncode == 0 and not problems, r.stderr


def completions(build_dir, *words):
    script = build_dir / "share" / "bash-completion" / "completions" / "vgt"
    words_arr = " ".join(f"'{w}'" for w in words)
    cmd = (f"source '{script}' && COMP_WORDS=({words_arr}) && COMP_CWORD={len(words) - 1} && _vgt && "
           "printf '%s\\n' \"${COMPREPLY[@]}\"")
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_bash_completion_loads_and_lists_every_verbs_options(vgt, build_dir):
    script = build_dir / "share" / "bash-completion" / "completions" / "vgt"
    r = subprocess.run(["bash", "-c", f"source '{script}' && complete -p vgt"], capture_output=True, text=True)
    assert r.returncode == 0 and "_vgt" in r.stdout and r.stdout.strip().endswith(" vgt"), r.stdout + r.stderr
    assert set(verbs(vgt)) <= set(completions(build_dir, "vgt", ""))
    for verb in verbs(vgt):
        offered = completions(build_dir, "vgt", verb, "--")
        for opt in table(vgt, verb):
            assert opt in offered, f"completion of vgt {verb} -- lacks {opt}"
    assert completions(build_dir, "vgt", "replay", "t.vgt", "--subcontexts", "") == ["captured", "group", "tsg"]
    assert completions(build_dir, "vgt", "synth", "--shape", "a") == ["all-types"]
    assert completions(build_dir, "vgt", "synth", "--shape", "t") == ["torch", "triton"]
    assert completions(build_dir, "vgt", "corpus", "b") == ["bless"]
    assert completions(build_dir, "vgt", "decode", "--sub") == ["--submits"]


def test_zsh_completion_names_every_verb_and_option(vgt, build_dir):
    text = (build_dir / "share" / "zsh" / "site-functions" / "_vgt").read_text()
    assert text.startswith("#compdef vgt")
    for verb in verbs(vgt):
        assert f"\n    {verb})\n" in text
        block = text.split(f"\n    {verb})\n", 1)[1].split(";;", 1)[0]
        for opt in table(vgt, verb):
            assert any(f"'{rep}{opt}{eq}[" in block for rep in ("", "*") for eq in ("", "=", "=-")), (verb, opt)


def test_an_optional_value_is_only_taken_with_equals(vgt):
    """record --replay[=BACKEND]: `--replay=sim` gives the backend; `--replay sim` would run a program called
    sim, so `--replay` alone never takes the next word."""
    assert "--replay[=BACKEND]" in vgt("record", "--help", check=0).stdout
    assert "not a backend" in vgt("record", "--replay=nope", "--", "true", check=2).stderr
    r = vgt("record", "--replay", "--check", "--", "no-such-program-xyz", check=None)
    assert "cannot run 'no-such-program-xyz'" in r.stderr   # the word after --replay was not its value
