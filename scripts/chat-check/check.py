"""Asks a corpus a question through the chat-compatible endpoint with OpenAI's Python
client, not streamed and streamed, and checks the answers and their sources list.
Usage: check.py BASE_URL TOKEN MODEL QUESTION EXPECT."""

import sys

import openai

base_url, token, model, question, expect = sys.argv[1:6]
client = openai.OpenAI(base_url=base_url, api_key=token or "unused", max_retries=0)
messages = [{"role": "system", "content": "Answer from the corpus."}, {"role": "user", "content": question}]

failures = []
resp = client.chat.completions.create(model=model, messages=messages)
answer = resp.choices[0].message.content
if resp.object != "chat.completion" or resp.choices[0].finish_reason != "stop":
    failures.append(f"response {resp!r}")
if expect.lower() not in answer.lower() or "\n\nSources:\n[1] " not in answer:
    failures.append(f"answer {answer!r} lacks {expect!r} or its sources")

streamed, finish, chunks = [], None, 0
for chunk in client.chat.completions.create(model=model, messages=messages, stream=True):
    chunks += 1
    if chunk.choices[0].delta.content:
        streamed.append(chunk.choices[0].delta.content)
    finish = chunk.choices[0].finish_reason or finish
if "".join(streamed) != answer or finish != "stop":
    failures.append(f"stream of {chunks} chunks gave {''.join(streamed)!r} (finish {finish!r}), want {answer!r}")

try:
    client.chat.completions.create(model="no_such_corpus", messages=messages)
    failures.append("an unknown corpus was answered")
except openai.NotFoundError as e:
    if getattr(e, "code", None) != "model_not_found":
        failures.append(f"unknown corpus error {e} (code {getattr(e, 'code', None)!r}, want model_not_found)")

models = [m.id for m in client.models.list()]
if model.split(":")[0] not in models:
    failures.append(f"models {models} lack {model}")

print(f"openai {openai.__version__}: {len(answer)} characters, {chunks} chunks streamed, models {models}")
if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
