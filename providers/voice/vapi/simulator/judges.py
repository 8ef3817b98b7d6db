"""The judges of an eval's turns, as the provider applies a turn's `judgePlan` (AssistantMessageJudgePlanExact,
...Regex, ...AI). A verdict is `{"status": "pass"}` or `{"status": "fail", "failureReason": "..."}`.

- `exact`: the reply's content equals `content` ignoring case and surrounding whitespace (the provider's "exact
  match, case-insensitive"). `toolCalls`: the reply made as many tool calls, in the same order, with the same
  names and, where the plan gives `arguments`, equal arguments.
- `regex`: `content` is searched anywhere in the reply (Python `re.search`); a JavaScript-style literal
  `/pattern/flags` (flags i, m, s) is accepted as the provider's examples write it, and `(?i)` works too.
  `toolCalls`: as many calls in the same order with the same names, and each argument the plan gives is a
  pattern searched in the call's argument value (as text; JSON for non-strings).
  A plan's content (required) is always checked, its tool calls when given; both must match.
- `ai`: the rubric is the plan's `model.messages`, in which `{{messages}}` becomes the conversation so far and
  `{{messages[-1]}}` its last message (the one judged), each as JSON (`{"role", "content", "toolCalls"?}`).
  * With a judge URL — the plan's own `model.url` when `model.provider` is `custom-llm`, else EVAL_JUDGE_URL
    (the `judge_url` of `build_app`) — the simulator POSTs an OpenAI-compatible chat-completions request
    (`{model, messages, temperature}`; `<url>/chat/completions` unless the URL already ends so; a bearer key
    from EVAL_JUDGE_API_KEY, or the custom model's `headers`) and reads `choices[0].message.content`: `pass` or
    `fail` (case, whitespace and a final period ignored); any other answer fails the turn. A judge that cannot
    be reached or answers an error raises `JudgeError` (the run ends with `endedReason` "error").
  * Without one, a deterministic rubric reader: each `must mention "X"` in the rubric requires X in the judged
    message's content, each `must not mention "Y"` forbids Y (both case-insensitive); a rubric with no such
    phrase passes a non-empty message other than the stand-in's fallback reply (see `standin`) and fails the
    rest.
"""
from __future__ import annotations

import json
import re
from typing import Any

import aiohttp

from providers.voice.vapi.simulator.standin import FALLBACK_REPLY

JUDGE_TIMEOUT = 20.0  # seconds, the provider's default for a custom model
_JS_LITERAL = re.compile(r"^/(?P<pattern>.*)/(?P<flags>[gimsuy]*)$", re.DOTALL)
_JS_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}
_VARIABLE = re.compile(r"\{\{\s*messages\s*(?P<last>\[\s*-1\s*\])?\s*\}\}")
_MENTION = re.compile(r'must\s+(?P<negated>not\s+)?mention\s+"(?P<phrase>[^"]+)"', re.IGNORECASE)


class JudgeError(Exception):
    """The judge model could not give a verdict (unreachable, an error status, an unreadable answer)."""


def compile_pattern(text: str) -> re.Pattern[str]:
    """A regex judge's pattern; `re.error` when it is not one."""
    literal = _JS_LITERAL.match(text)
    if literal and literal["pattern"]:
        flags = 0
        for flag in literal["flags"]:
            flags |= _JS_FLAGS.get(flag, 0)
        return re.compile(literal["pattern"], flags)
    return re.compile(text)


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _tool_calls(plan: dict[str, Any], made: list[dict[str, Any]], regex: bool) -> str | None:
    """Why the calls `made` do not match the plan's `toolCalls` (None: they match)."""
    expected = plan["toolCalls"]
    names = [c.get("name") for c in made]
    if [c.get("name") for c in expected] != names:
        return f"expected tool calls {[c.get('name') for c in expected]} but got {names}"
    for want, got in zip(expected, made, strict=True):
        if "arguments" not in want:
            continue
        if not regex:
            if want["arguments"] != got.get("arguments", {}):
                return (f"expected {want['name']} arguments {json.dumps(want['arguments'], sort_keys=True)} "
                        f"but got {json.dumps(got.get('arguments', {}), sort_keys=True)}")
            continue
        for key, pattern in want["arguments"].items():
            value = (got.get("arguments") or {}).get(key)
            if value is None or not compile_pattern(_text(pattern)).search(_text(value)):
                return f"{want['name']} argument {key} = {value!r} does not match {pattern!r}"
    return None


def exact(plan: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content") or ""
    if content.strip().lower() != plan["content"].strip().lower():
        return fail(f"Expected exact match: {plan['content']!r} but got: {content!r}")
    if "toolCalls" in plan and (reason := _tool_calls(plan, message.get("toolCalls") or [], regex=False)):
        return fail(reason)
    return {"status": "pass"}


def regex(plan: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content") or ""
    if not compile_pattern(plan["content"]).search(content):
        return fail(f"Expected a match for {plan['content']!r} but got: {content!r}")
    if "toolCalls" in plan and (reason := _tool_calls(plan, message.get("toolCalls") or [], regex=True)):
        return fail(reason)
    return {"status": "pass"}


def fail(reason: str) -> dict[str, Any]:
    return {"status": "fail", "failureReason": reason}


def render(text: str, conversation: list[dict[str, Any]]) -> str:
    """A rubric with `{{messages}}` and `{{messages[-1]}}` filled in (module docstring)."""
    whole = json.dumps(conversation, ensure_ascii=False)
    last = json.dumps(conversation[-1] if conversation else None, ensure_ascii=False)
    return _VARIABLE.sub(lambda m: last if m["last"] else whole, text)


def rubric_verdict(rubric: str, message: dict[str, Any]) -> dict[str, Any]:
    """The deterministic reading of a rubric without a judge model (module docstring)."""
    content = (message.get("content") or "").strip()
    phrases = list(_MENTION.finditer(rubric))
    if not phrases:
        if content and content != FALLBACK_REPLY:
            return {"status": "pass"}
        return fail("the message is empty or the assistant's fallback reply")
    reasons = []
    for match in phrases:
        present = match["phrase"].lower() in content.lower()
        if match["negated"] and present:
            reasons.append(f'the message mentions "{match["phrase"]}"')
        elif not match["negated"] and not present:
            reasons.append(f'the message does not mention "{match["phrase"]}"')
    return fail("; ".join(reasons)) if reasons else {"status": "pass"}


class Judges:
    """Applies judge plans; `url` and `api_key`: the chat-completions judge (None: the deterministic reader)."""

    def __init__(self, url: str | None = None, api_key: str | None = None):
        self.url = url or None
        self.api_key = api_key or None

    async def verdict(self, plan: dict[str, Any], message: dict[str, Any],
                      conversation: list[dict[str, Any]]) -> dict[str, Any]:
        """The verdict on `message`, the last of `conversation` (whose messages are `{role, content, toolCalls?}`)."""
        if plan["type"] == "exact":
            return exact(plan, message)
        if plan["type"] == "regex":
            return regex(plan, message)
        model = plan["model"]
        rubric = [{"role": m["role"], "content": render(m.get("content") or "", conversation)}
                  for m in model["messages"]]
        url, headers = self.url, ({"Authorization": f"Bearer {self.api_key}"} if self.api_key else {})
        if model.get("provider") == "custom-llm" and model.get("url"):
            url, headers = model["url"], dict(model.get("headers") or {})
        if not url:
            return rubric_verdict("\n".join(m["content"] for m in rubric), message)
        answer = await self._ask(url, headers, model, rubric)
        word = answer.strip().strip(".").strip().lower()
        if word in ("pass", "fail"):
            return {"status": "pass"} if word == "pass" else fail("the judge answered fail")
        return fail(f"the judge answered {answer.strip()[:100]!r}, not pass or fail")

    @staticmethod
    async def _ask(url: str, headers: dict[str, str], model: dict[str, Any], messages: list[dict[str, Any]]) -> str:
        endpoint = url if url.rstrip("/").endswith("/chat/completions") else url.rstrip("/") + "/chat/completions"
        body = {"model": model["model"], "messages": messages, "temperature": model.get("temperature", 0)}
        if model.get("maxTokens") is not None:
            body["max_tokens"] = model["maxTokens"]
        timeout = aiohttp.ClientTimeout(total=float(model.get("timeoutSeconds") or JUDGE_TIMEOUT))
        try:
            async with aiohttp.ClientSession(timeout=timeout) as session, \
                    session.post(endpoint, json=body, headers=headers) as response:
                if response.status >= 300:
                    raise JudgeError(f"The judge model answered HTTP {response.status}")
                answer = await response.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise JudgeError(f"The judge model could not be reached ({type(exc).__name__})") from None
        except ValueError:
            raise JudgeError("The judge model sent an unreadable answer") from None
        try:
            content = answer["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise JudgeError("The judge model's answer has no choices[0].message.content") from None
        if not isinstance(content, str):
            raise JudgeError("The judge model's answer has no text")
        return content
