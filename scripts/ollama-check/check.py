"""Asks a corpus a question through the Ollama-compatible routes with Ollama's Python
client: chat and generate, not streamed and streamed; lists and shows the models; and
checks that an unknown model is Ollama's 404.
Usage: check.py HOST TOKEN MODEL QUESTION EXPECT."""

import sys
from importlib.metadata import version

import ollama

host, token, model, question, expect = sys.argv[1:6]
headers = {"Authorization": f"Bearer {token}"} if token else None
client = ollama.Client(host=host, headers=headers)
messages = [{"role": "system", "content": "Answer from the corpus."}, {"role": "user", "content": question}]

failures = []
resp = client.chat(model=model, messages=messages, stream=False)
answer = resp.message.content
if not resp.done or resp.done_reason != "stop" or resp.message.role != "assistant":
    failures.append(f"chat response {resp!r}")
if expect.lower() not in answer.lower() or "\n\nSources:\n[1] " not in answer:
    failures.append(f"answer {answer!r} lacks {expect!r} or its sources")
if not resp.eval_count or not resp.prompt_eval_count or not resp.total_duration:
    failures.append(f"chat response lacks counts or durations: {resp!r}")

parts, last = [], None
for part in client.chat(model=model, messages=messages, stream=True):
    parts.append(part.message.content or "")
    last = part
if "".join(parts) != answer or last is None or not last.done or last.done_reason != "stop":
    failures.append(f"chat stream of {len(parts)} objects gave {''.join(parts)!r} (last {last!r}), want {answer!r}")

gen = client.generate(model=model, prompt=question, stream=False)
if gen.response != answer or gen.done_reason != "stop":
    failures.append(f"generate gave {gen.response!r} ({gen.done_reason!r}), want the chat answer {answer!r}")
streamed = "".join(p.response or "" for p in client.generate(model=model, prompt=question, stream=True))
if streamed != answer:
    failures.append(f"generate stream gave {streamed!r}, want {answer!r}")

try:
    client.chat(model="no_such_corpus", messages=messages, stream=False)
    failures.append("an unknown corpus was answered")
except ollama.ResponseError as e:
    if e.status_code != 404 or "not found" not in e.error:
        failures.append(f"unknown corpus error {e.error!r} (status {e.status_code}), want 404 not found")
try:
    for _ in client.chat(model="no_such_corpus", messages=messages, stream=True):
        pass
    failures.append("an unknown corpus was answered, streamed")
except ollama.ResponseError as e:
    if e.status_code != 404:
        failures.append(f"unknown corpus error, streamed: {e.error!r} (status {e.status_code}), want 404")

models = [m.model for m in client.list().models]
tag = model.split(":")[0] + ":latest"
if tag not in models:
    failures.append(f"models {models} lack {tag}")
shown = client.show(model)
if shown.details is None or shown.details.family != "graphrag" or shown.modelinfo.get("graphrag.corpus") != model.split(":")[0]:
    failures.append(f"show {model}: {shown!r}")

print(f"ollama {version('ollama')}: {len(answer)} characters, {len(parts)} objects streamed, models {models}")
if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
