"""The openai backend against a real OpenAI-compatible server: ``transformers serve`` serving the
embedded model on loopback (started once for the module), with a fault-injecting proxy in front
of it where a test needs faults, counters or rewritten answers (``tests/helpers/servers.py``).

What the real server does, and so what is tested where: ``transformers serve`` answers chat and
completion requests but ignores ``logprobs``, ``top_logprobs`` and ``echo``. So generate mode runs
on it end to end (and must equal the local backend's greedy text), while choice mode and
loglikelihood must stop with the sentence that says only generate mode works there. The branch
where a server does return top logprobs is tested through the proxy, which adds to the real
server's answers the first token's real top-20 log-probabilities computed by the same model in
this process, and checks that the server's own first token is the top one.

Tests without the server (parsing, settings, refused and silent ports, a 401 that echoes the
key) are fast; the server tests are marked slow.
"""

from __future__ import annotations

import json
import logging
import math
import pickle
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.fault_proxy import Fault, FaultProxy, mixed_faults
from helpers.servers import (
    KEY,
    KEY_ENV,
    EchoingServer,
    ModelServer,
    free_port,
    serving_folder,
)

import robustness as rb
from robustness.core.cache import Cache
from robustness.core.errors import ModelError
from robustness.core.table import write_csv, write_parquet
from robustness.run import run
from robustness.runners import CachedRunner, Runner, make_runner
from robustness.runners.openai import (
    OpenAIRunner,
    echo_loglikelihood,
    first_top_logprobs,
    label_scores,
    make_openai_runner,
)

QUICK = {"backoff": 0.01, "max_backoff": 0.05}


def chat(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


PROMPTS = [
    chat(f"What is {a} plus {b}? Reply with the number only.")
    for a, b in ((2, 3), (7, 5), (10, 4), (6, 6), (9, 1), (3, 8), (12, 2), (4, 4))
]


def one_sentence(message: str) -> bool:
    """One line, ending in a full stop, with no sentence break inside."""
    return "\n" not in message and message.endswith(".") and ". " not in message[:-1]


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return serving_folder()


@pytest.fixture(scope="module")
def server(folder: Path, tmp_path_factory: pytest.TempPathFactory):
    log = tmp_path_factory.mktemp("serve-log") / "server.log"
    with ModelServer(folder, log) as started:
        yield started


@pytest.fixture(scope="module")
def local():
    """The embedded model in this process (the local backend), for reference numbers."""
    return make_runner("hf", "embedded", threads=1, batch_size=4)


# --------------------------------------------------------------------------- parsing
def test_labels_map_spellings_with_and_without_space_and_renormalise() -> None:
    top = [
        (" B", math.log(0.5)),
        ("B", math.log(0.1)),
        ("ĠA", math.log(0.2)),
        ("\n", math.log(0.15)),
        ("▁C", math.log(0.05)),
    ]
    probs, label_lp, top_prob, top_token = label_scores(top, ["A", "B", "C", "D"])
    assert probs == pytest.approx((0.2 / 0.85, 0.6 / 0.85, 0.05 / 0.85, 0.0))
    assert label_lp[1] == pytest.approx(math.log(0.6)) and label_lp[3] == -math.inf
    assert top_prob == pytest.approx(0.5) and top_token == " B"
    with pytest.raises(ModelError, match=r"none of the labels \['1', '2'\]"):
        label_scores(top, ["1", "2"])


def test_top_logprobs_are_read_from_both_endpoint_formats() -> None:
    chat_answer = {
        "choices": [
            {
                "logprobs": {
                    "content": [
                        {
                            "token": "B",
                            "logprob": -0.1,
                            "top_logprobs": [
                                {"token": "A", "logprob": -3.0},
                                {"token": "B", "logprob": -0.1},
                            ],
                        }
                    ]
                }
            }
        ]
    }
    assert first_top_logprobs("chat", chat_answer) == [("B", -0.1), ("A", -3.0)]
    text_answer = {
        "choices": [
            {
                "logprobs": {
                    "tokens": [" A"],
                    "token_logprobs": [-0.2],
                    "top_logprobs": [{" A": -0.2, " B": -1.9}],
                }
            }
        ]
    }
    assert first_top_logprobs("completions", text_answer) == [(" A", -0.2), (" B", -1.9)]
    listed = {"choices": [{"logprobs": {"top_logprobs": [[{"token": "x", "logprob": -1.0}]]}}]}
    assert first_top_logprobs("completions", listed) == [("x", -1.0)]
    for missing in (
        {"choices": [{"message": {"content": "B"}}]},
        {"choices": [{"logprobs": None}]},
        {
            "choices": [
                {"logprobs": {"content": [{"token": "B", "logprob": -0.1, "top_logprobs": []}]}}
            ]
        },
    ):
        assert first_top_logprobs("chat", missing) is None


def test_echoed_logprobs_count_the_response_tokens_only() -> None:
    # "Paris is" + " in France": the token " in" starts the response; "is" ends the prompt.
    answer = {
        "choices": [
            {
                "logprobs": {
                    "tokens": ["Paris", " is", " in", " France", "."],
                    "token_logprobs": [None, -1.0, -0.5, -0.25, -2.0],
                    "text_offset": [0, 5, 8, 11, 18],
                }
            }
        ]
    }
    result = echo_loglikelihood(answer, prompt_chars=8, full_chars=18)
    assert result is not None and result.n_tokens == 2 and result.logprob == pytest.approx(-0.75)
    # a token spanning the boundary belongs to the response; offsets from token lengths.
    spanning = {
        "choices": [
            {"logprobs": {"tokens": ["ab", "cd", "e"], "token_logprobs": [None, -1.0, -3.0]}}
        ]
    }
    result = echo_loglikelihood(spanning, prompt_chars=3, full_chars=5)
    assert result is not None and result.n_tokens == 2 and result.logprob == pytest.approx(-4.0)
    assert echo_loglikelihood({"choices": [{"text": "x"}]}, 1, 2) is None
    not_echoed = {"choices": [{"logprobs": {"tokens": ["x"], "token_logprobs": [-1.0]}}]}
    assert echo_loglikelihood(not_echoed, prompt_chars=5, full_chars=9) is None


# --------------------------------------------------------------------------- settings
def test_identity_names_what_determines_numbers_but_not_port_or_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    a = make_openai_runner("m", base_url="http://127.0.0.1:8001/v1", api_key_env=KEY_ENV)
    b = make_openai_runner(
        "m",
        base_url="http://127.0.0.1:9999/v1/",
        api_key_env=KEY_ENV,
        concurrency=3,
        timeout=5,
        max_retries=1,
        batch_size=2,
    )
    assert isinstance(a, Runner) and isinstance(a, OpenAIRunner)
    assert a.identity() == b.identity()
    assert a.identity()["server_id"] == "127.0.0.1/v1"
    assert a.identity()["endpoints"] == {"text": "completions", "messages": "chat"}
    assert (
        make_openai_runner("m", base_url="http://h:1/v1", server_id="x").identity() != a.identity()
    )
    assert (
        make_openai_runner("m", base_url="http://127.0.0.1:1/v1", chat="never").identity()
        != a.identity()
    )
    assert make_openai_runner("other", base_url="http://127.0.0.1:1/v1").identity() != a.identity()
    for shown in (
        json.dumps(a.identity()),
        repr(a),
        str(vars(a)),
        pickle.dumps(a).hex(),
        pickle.dumps(a).decode("latin-1"),
    ):
        assert KEY not in shown
        assert "8001" not in json.dumps(a.identity())
    copy = pickle.loads(pickle.dumps(a))
    assert copy.identity() == a.identity() and copy.url == a.url


def test_bad_settings_are_one_sentence_each() -> None:
    cases = [
        (dict(base_url="http://user:pw@127.0.0.1:1/v1"), "must not carry credentials"),
        (dict(base_url="ftp://127.0.0.1/v1"), "http:// or https://"),
        (dict(base_url="http://127.0.0.1:1/v1", concurrency=0), "concurrency"),
        (dict(base_url="http://127.0.0.1:1/v1", timeout=0), "timeout"),
        (dict(base_url="http://127.0.0.1:1/v1", chat="sometimes"), "unknown chat setting"),
        (dict(base_url="http://127.0.0.1:1/v1", top_logprob=5), "unknown setting 'top_logprob'"),
    ]
    for kwargs, expected in cases:
        with pytest.raises(ModelError, match=expected) as info:
            make_openai_runner("m", **kwargs)
        assert one_sentence(str(info.value)) and "pw" not in str(info.value)


def test_loglikelihood_refuses_chat_prompts_before_sending() -> None:
    runner = make_openai_runner("m", base_url=f"http://127.0.0.1:{free_port()}/v1")
    with pytest.raises(ModelError, match="cannot score chat messages"):
        runner.loglikelihood([(chat("hi"), " there")])
    assert runner.stats.attempts == 0
    assert runner.loglikelihood([("prompt", "")])[0].n_tokens == 0


# --------------------------------------------------------------------------- failures, no server
def test_refused_connections_stop_with_one_sentence_then_fail_fast() -> None:
    runner = make_openai_runner(
        "m", base_url=f"http://127.0.0.1:{free_port()}/v1", max_retries=3, concurrency=2, **QUICK
    )
    with pytest.raises(ModelError) as info:
        runner.generate(["a", "b", "c"], 2)
    message = str(info.value)
    assert one_sentence(message), message
    assert message.startswith("the openai backend stopped: a request to http://127.0.0.1:")
    assert "failed 4 times in a row (last: connection error ConnectionRefusedError)" in message
    assert "after answering 0 of 3 prompts" in message
    assert runner.stats.retries >= 3 and runner.stats.reasons["connection"] >= 4
    sent = runner.stats.attempts
    with pytest.raises(ModelError, match="no request was sent"):
        runner.generate(["d"], 2)
    assert runner.stats.attempts == sent
    runner.reset()
    with pytest.raises(ModelError, match="failed 4 times"):
        runner.generate(["d"], 2)


def test_each_attempt_is_bounded_by_the_timeout() -> None:
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)  # connections complete in the backlog and never get an answer
    port = silent.getsockname()[1]
    try:
        runner = make_openai_runner(
            "m", base_url=f"http://127.0.0.1:{port}/v1", timeout=0.3, max_retries=1, **QUICK
        )
        started = time.monotonic()
        with pytest.raises(
            ModelError,
            match=r"failed 2 times in a row \(last: no answer within "
            r"0\.3 s\)",
        ):
            runner.generate(["a"], 2)
        elapsed = time.monotonic() - started
    finally:
        silent.close()
    assert 0.6 <= elapsed < 3.0
    assert runner.stats.reasons == {"timeout": 2}


def test_a_401_stops_and_an_echoed_key_is_scrubbed(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    caplog.set_level(logging.DEBUG)
    with FaultProxy("127.0.0.1:9", expect_key="another-key") as proxy:
        runner = make_openai_runner("m", base_url=proxy.base_url, api_key_env=KEY_ENV, **QUICK)
        with pytest.raises(ModelError) as info:
            runner.generate(["a", "b"], 2)
    message = str(info.value)
    assert one_sentence(message), message
    assert "HTTP 401" in message and f"environment variable {KEY_ENV}" in message
    assert "bad key: Bearer [key]" in message and KEY not in message
    assert KEY not in caplog.text and proxy.authorized == 0 and proxy.posts >= 1


def test_a_key_that_cannot_be_a_header_stops_without_showing_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY + "\nX-Injected: 1")
    runner = make_openai_runner(
        "m", base_url=f"http://127.0.0.1:{free_port()}/v1", api_key_env=KEY_ENV, **QUICK
    )
    with pytest.raises(ModelError) as info:
        runner.generate(["a"], 2)
    assert one_sentence(str(info.value)) and KEY not in str(info.value)
    assert f"the API key in the environment variable {KEY_ENV}" in str(info.value)


# --------------------------------------------------------------------------- the real server
@pytest.mark.slow
def test_generate_through_the_server_equals_the_local_backend(
    server: ModelServer, local: Any
) -> None:
    runner = make_openai_runner(server.model, base_url=server.base_url, concurrency=2)
    prompts: list[Any] = [*PROMPTS[:3], "The capital of France is"]
    got = runner.generate(prompts, 6)
    want = local.generate(prompts, 6)
    assert [g.text for g in got] == [w.text for w in want]
    assert all(g.n_tokens >= 1 and g.latency_ms > 0 for g in got)
    assert runner.stats.requests == 4 and runner.stats.retries == 0


@pytest.mark.slow
def test_study_through_faults_loses_nothing_duplicates_nothing_and_reruns_free(
    server: ModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    caplog.set_level(logging.DEBUG)
    variants = rb.perturb(rb.demo_items()[:4], families=["option_order"], n=2, seed=0)
    model = rb.ModelConfig(
        name="served", backend="openai", model=server.model, mode="generate", max_new_tokens=3
    )
    cache_path = tmp_path / "cache.sqlite"
    with FaultProxy(f"127.0.0.1:{server.port}", plan=mixed_faults, expect_key=KEY) as proxy:
        runner = make_openai_runner(
            server.model,
            base_url=proxy.base_url,
            api_key_env=KEY_ENV,
            concurrency=4,
            max_retries=4,
            batch_size=3,
            **QUICK,
        )
        info: dict[str, Any] = {}
        table = run(variants, [model], cache=cache_path, runners={"served": runner}, info=info)
        posts_first = proxy.posts

        # nothing lost, nothing duplicated: one valid row per variant, one cache row per prompt.
        assert len(table) == len(variants) == 12
        keys = table[["item_id", "category", "variant_id"]].apply(tuple, axis=1)
        assert keys.is_unique
        assert not table["invalid_reason"].fillna("").str.startswith("error").any()
        assert table["raw_output"].notna().all()
        with Cache(cache_path) as cache:
            assert cache.count("generate") == len(variants)
        assert info["served"]["cache"]["misses"] == len(variants)

        # faults happened and every one was retried exactly once; the key was sent every time.
        stats = runner.stats
        assert proxy.injected >= 4 and set(proxy.faults) >= {"drop", "lose", "status"}
        assert stats.retries + stats.reconnects == proxy.injected
        assert stats.requests == len(variants) and stats.failed == 0
        assert proxy.authorized == proxy.posts == stats.attempts + stats.reconnects
        assert "retrying a request" in caplog.text

        # a repeated run is free: not one request, the same table.
        again_info: dict[str, Any] = {}
        again_runner = make_openai_runner(
            server.model, base_url=proxy.base_url, api_key_env=KEY_ENV
        )
        again = run(
            variants, [model], cache=cache_path, runners={"served": again_runner}, info=again_info
        )
        assert proxy.posts == posts_first and again_runner.stats.attempts == 0
        assert again_info["served"]["cache"] == {
            **again_info["served"]["cache"],
            "hits": len(variants),
            "misses": 0,
        }
        assert again["raw_output"].tolist() == table["raw_output"].tolist()

    # the key is nowhere: table files, cache, logs, output, identity, repr.
    write_parquet(table, tmp_path / "table.parquet", {"models": info})
    write_csv(table, tmp_path / "table.csv")
    out, err = capfd.readouterr()
    texts = [out, err, caplog.text, repr(runner), json.dumps(info), server.log_tail(10**7)]
    assert not [t for t in texts if KEY in t]
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"cache.sqlite", "table.parquet", "table.csv"}
    assert not [p for p in files if KEY.encode() in p.read_bytes()]


@pytest.mark.slow
def test_a_prompt_the_server_rejects_fails_alone_and_is_not_sent_twice(
    server: ModelServer, tmp_path: Path
) -> None:
    def reject_one(body: bytes, attempt: int) -> Fault | None:
        return Fault("status", status=400) if b"7 plus 5" in body else None

    with (
        FaultProxy(f"127.0.0.1:{server.port}", plan=reject_one) as proxy,
        Cache(tmp_path / "cache.sqlite") as cache,
    ):
        runner = make_openai_runner(server.model, base_url=proxy.base_url, concurrency=2)
        with pytest.raises(ModelError) as info:
            CachedRunner(runner, cache).generate(PROMPTS[:5], 2)
        message = str(info.value)
        assert one_sentence(message), message
        assert message.startswith("prompt 1: http://127.0.0.1:") and "HTTP 400" in message
        assert "injected 400" in message and len(cache) == 4
        assert proxy.faults == {"status": 1} and runner.stats.retries == 0
        posts = proxy.posts
        with pytest.raises(ModelError, match=r"prompt 0: .*HTTP 400"):
            CachedRunner(runner, cache).generate([PROMPTS[1]], 2)
        assert proxy.posts == posts  # known to fail: not sent again


@pytest.mark.slow
def test_a_dying_server_stops_the_call_and_a_restart_on_another_port_resumes(
    server: ModelServer, folder: Path, tmp_path: Path
) -> None:
    cache = Cache(tmp_path / "cache.sqlite")
    with FaultProxy(f"127.0.0.1:{server.port}", fail_after=3) as dying:
        first = make_openai_runner(
            server.model, base_url=dying.base_url, concurrency=2, max_retries=2, **QUICK
        )
        with pytest.raises(ModelError) as info:
            CachedRunner(first, cache).generate(PROMPTS, 3)
        message = str(info.value)
        assert one_sentence(message), message
        assert "failed 3 times in a row (last: HTTP 503)" in message
        assert "after answering 3 of 8 prompts" in message
        assert len(cache) == 3
        posts = dying.posts
        with pytest.raises(ModelError, match="no request was sent"):
            CachedRunner(first, cache).generate(PROMPTS, 3)
        assert dying.posts == posts

    with (
        ModelServer(folder, tmp_path / "second.log") as second,
        FaultProxy(f"127.0.0.1:{second.port}") as counting,
    ):
        assert second.port != server.port and counting.port != dying.port
        resumed = make_openai_runner(server.model, base_url=counting.base_url, concurrency=2)
        assert resumed.identity() == first.identity()
        cached = CachedRunner(resumed, cache)
        results = cached.generate(PROMPTS, 3)
    assert cached.stats.hits == 3 and cached.stats.misses == 5
    assert counting.posts == 5 and len(cache) == 8
    assert all(r.text for r in results)
    cache.close()


@pytest.mark.slow
def test_choice_mode_on_a_server_without_logprobs_says_only_generate_works(
    server: ModelServer,
) -> None:
    with FaultProxy(f"127.0.0.1:{server.port}") as proxy:
        runner = make_openai_runner(server.model, base_url=proxy.base_url, concurrency=2)
        variants = rb.perturb(rb.demo_items()[:2], families=["option_order"], n=2, seed=0)
        model = rb.ModelConfig(name="served", backend="openai", model=server.model, mode="choice")
        table = run(variants, [model], runners={"served": runner})
        reasons = set(table["invalid_reason"])
        assert len(reasons) == 1 and not table["valid"].any()
        reason = reasons.pop()
        assert "returned no top_logprobs" in reason
        assert 'use mode = "generate" for this model (only generate mode works' in reason
        assert proxy.posts <= 4 < len(variants)  # the rest were refused without a request

        with pytest.raises(ModelError) as info:
            runner.loglikelihood([("The capital of France is", " Paris")])
        assert one_sentence(str(info.value))
        assert "returned no echoed prompt logprobs" in str(info.value)
        assert runner.generate(["The capital of France is"], 2)[0].text  # generate still works


class TopLogprobs:
    """Adds to the real server's answers the first token's real top-20 log-probabilities,
    computed by the local backend's model on the same prompt, in the endpoint's format; and
    records the server's own first token next to the top one."""

    def __init__(self, local: Any) -> None:
        self.local = local
        self.lock = threading.Lock()
        self.pairs: list[tuple[str, str]] = []
        self.seen: dict[str, list[tuple[int, float]]] = {}

    def top(self, prompt: Any, skip_special: bool = False) -> list[tuple[str, float]]:
        """The 20 most likely first tokens and their log-probabilities, most likely first."""
        import torch

        key = json.dumps(prompt)
        with self.lock, torch.inference_mode():
            if key not in self.seen:
                ids = self.local.encode_prompts([prompt])[0]
                logits = self.local.forward_last(self.local.collate([ids]), 1)[0, -1]
                values, tokens = torch.log_softmax(logits, -1).topk(20)
                self.seen[key] = list(zip(tokens.tolist(), values.tolist(), strict=True))
            decode = self.local.tokenizer.decode
            return [
                (decode([t], skip_special_tokens=skip_special), float(v)) for t, v in self.seen[key]
            ]

    def __call__(
        self, path: str, request: dict[str, Any], answer: dict[str, Any]
    ) -> dict[str, Any]:
        choice = answer["choices"][0]
        prompt = request.get("messages", request.get("prompt"))
        top = self.top(prompt)
        if path.endswith("/chat/completions"):
            served = choice["message"]["content"]
            choice["logprobs"] = {
                "content": [
                    {
                        "token": top[0][0],
                        "logprob": top[0][1],
                        "top_logprobs": [{"token": t, "logprob": v} for t, v in top],
                    }
                ]
            }
        else:
            served = choice["text"]
            choice["logprobs"] = {
                "tokens": [top[0][0]],
                "token_logprobs": [top[0][1]],
                "top_logprobs": [dict(top)],
                "text_offset": [len(request["prompt"])],
            }
        # the server decodes without special tokens (an end-of-turn token reads as "").
        expected = self.top(prompt, skip_special=True)[0][0]
        with self.lock:
            self.pairs.append((served, expected))
        return answer


@pytest.mark.slow
def test_choice_mode_with_top_logprobs_matches_the_local_backend(
    server: ModelServer, local: Any
) -> None:
    rewrite = TopLogprobs(local)
    variants = rb.perturb(rb.demo_items()[:3], families=["option_order"], n=1, seed=0)
    prompts: list[Any] = [v.spec.messages() for v in variants]
    prompts += [variants[0].spec.render(), variants[1].spec.render()]  # completions route
    labels = [list(v.spec.labels) for v in variants] + [
        list(variants[0].spec.labels),
        list(variants[1].spec.labels),
    ]
    with FaultProxy(f"127.0.0.1:{server.port}", rewrite=rewrite) as proxy:
        runner = make_openai_runner(server.model, base_url=proxy.base_url, concurrency=2)
        got = runner.score_options(prompts, labels)
    want = local.score_options(prompts, labels)
    assert proxy.posts == len(prompts)
    # the rewrite models the real server: its own greedy first token is the top one.
    assert [p for p in rewrite.pairs if p[0] != p[1]] == []
    for g, w, top in zip(got, want, [rewrite.top(p) for p in prompts], strict=True):
        floor = math.exp(top[-1][1])  # a spelling missing from the top 20 is below this
        assert g.top_prob == pytest.approx(w.top_prob, rel=1e-4) and g.top_token == w.top_token
        for mine, theirs in zip(g.label_logprobs, w.label_logprobs, strict=True):
            theirs_p, mine_p = math.exp(theirs), math.exp(mine)
            assert mine_p <= theirs_p * (1 + 1e-4) + 1e-9
            assert theirs_p - mine_p <= 2 * floor * (1 + 1e-4)
        ordered = sorted(w.probs, reverse=True)
        label_mass = sum(math.exp(lp) for lp in w.label_logprobs)
        if (ordered[0] - ordered[1]) * label_mass > 4 * floor:
            assert g.argmax == w.argmax
        assert sum(g.probs) == pytest.approx(1.0)


@pytest.mark.slow
def test_a_study_file_reaches_the_server_through_make_runner(
    server: ModelServer, tmp_path: Path
) -> None:
    """The wiring end to end: [[models]] backend = "openai" with options -> run_study."""
    study = tmp_path / "served.toml"
    study.write_text(
        '[study]\nname = "served"\nfamilies = ["option_order"]\nn_variants = 1\n'
        "items_per_dataset = 1\n"
        f'[[models]]\nname = "served"\nbackend = "openai"\nmodel = "{server.model}"\n'
        'mode = "generate"\nmax_new_tokens = 4\n'
        f'[models.options]\nbase_url = "{server.base_url}"\nconcurrency = 2\n'
        '[output]\ntable = "served.parquet"\n'
    )
    table, meta = rb.run_study(rb.load_study(study))
    assert len(table) == 8 and set(table["model"]) == {"served"}  # 4 datasets x 2 prompts
    assert meta["models"]["served"]["runner"]["backend"] == "openai"
    identity = json.dumps(meta["models"]["served"]["runner"])
    assert server.base_url not in identity  # an ephemeral port is no part of the identity


# --------------------------------------------------------------------------- a key in the answer
def test_a_key_echoed_in_the_answer_text_is_stored_nowhere(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    variants = rb.perturb(rb.demo_items()[:2], families=["option_order"], n=1, seed=0)
    with EchoingServer() as server:
        models = [
            rb.ModelConfig(name="g", backend="openai", model="m", mode="generate"),
            rb.ModelConfig(name="c", backend="openai", model="m", mode="choice"),
        ]
        runners = {
            m.name: make_openai_runner("m", base_url=server.base_url, api_key_env=KEY_ENV)
            for m in models
        }
        table = run(variants, models, cache=tmp_path / "cache.sqlite", runners=runners)
        # the text really carried the key: it arrives scrubbed, not dropped.
        generated = table[table["model"] == "g"]["raw_output"]
        assert generated.str.endswith("your header was Bearer [key]").all()
        direct = runners["g"].generate(["plain text"], 3)[0].text
        assert direct == "B, and your header was Bearer [key]"
        scores = runners["c"].score_options([chat("q")], [["A", "B"]])[0]
        assert scores.top_token == "header was Bearer [key]"
        write_parquet(table, tmp_path / "table.parquet", {})
        write_csv(table, tmp_path / "table.csv")
        for path in tmp_path.iterdir():
            assert KEY.encode() not in path.read_bytes(), path.name
        assert KEY not in table.to_json()

        # a placeholder key (shorter than 8 characters) is no secret: answers stay intact.
        monkeypatch.setenv(KEY_ENV, "EMPTY")
        runner = make_openai_runner("m", base_url=server.base_url, api_key_env=KEY_ENV)
        assert runner.generate(["x"], 3)[0].text == "B, and your header was Bearer EMPTY"
