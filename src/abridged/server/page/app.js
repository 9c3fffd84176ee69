// The abridged service's page: conversations, streamed turns, the context ring, compaction.
"use strict";

// notes: what the page itself showed in a conversation (errors of failed turns, the results of
// slash commands), which the store does not keep, redrawn with the timeline until a reload
const state = { id: null, streaming: false, conversations: [], notes: {}, compactions: null };
const $ = (id) => document.getElementById(id);

// -- the API ---------------------------------------------------------------------------------

function headers(extra) {
  const h = Object.assign({ "Content-Type": "application/json" }, extra || {});
  const key = localStorage.getItem("abridged-key");
  if (key) h.Authorization = "Bearer " + key;
  return h;
}

async function askKey() {
  const dialog = $("key-dialog");
  $("key-input").value = "";
  dialog.showModal();
  await new Promise((done) => dialog.addEventListener("close", done, { once: true }));
  const key = $("key-input").value.trim();
  if (key) localStorage.setItem("abridged-key", key);
  return Boolean(key);
}

async function api(method, path, body, options) {
  const init = { method, headers: headers() };
  if (body !== undefined) init.body = JSON.stringify(body);
  let response = await fetch(path, init);
  if (response.status === 401 && (await askKey())) {
    init.headers = headers();
    response = await fetch(path, init);
  }
  if ((options || {}).raw) return response;
  const data = response.status === 204 ? null : await response.json();
  if (!response.ok && !(options || {}).allow) {
    throw new Error(typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail));
  }
  return { status: response.status, data };
}

// -- small helpers ---------------------------------------------------------------------------

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

function k(tokens) {
  if (tokens === null || tokens === undefined) return "–";
  return tokens >= 1000 ? (tokens / 1024).toFixed(1).replace(/\.0$/, "") + "k" : String(tokens);
}

function ms(value) {
  return value === null || value === undefined ? "–" : Math.round(value) + " ms";
}

// Assistant text is Markdown, rendered by the vendored marked and sanitized by DOMPurify (both
// served by the service itself); without them it stays plain text.
function textNode(text, markdown) {
  const node = el("div", "text");
  if (markdown && window.marked && window.DOMPurify) {
    node.innerHTML = window.DOMPurify.sanitize(window.marked.parse(text));
    node.classList.add("markdown-body");
  } else {
    node.textContent = text;
  }
  return node;
}

function at(value) {
  const t = Date.parse(value);
  return Number.isNaN(t) ? 0 : t;
}

function scrollDown() {
  const t = $("timeline");
  t.scrollTop = t.scrollHeight;
}

// -- conversations ---------------------------------------------------------------------------

async function loadConversations() {
  const q = $("search").value.trim();
  const [{ data }] = await Promise.all([
    api("GET", "/v1/conversations" + (q ? "?q=" + encodeURIComponent(q) : "")),
    searchMessages(q),
  ]);
  state.conversations = data;
  const list = $("conversations");
  list.replaceChildren();
  for (const c of data) {
    const item = el("li");
    const button = el("button", c.id === state.id ? "conv current" : "conv", c.title || "New conversation");
    button.type = "button";
    button.dataset.testid = "conversation";
    button.dataset.id = c.id;
    button.title = c.title || c.id;
    button.addEventListener("click", () => openConversation(c.id));
    item.append(button);
    list.append(item);
  }
}

// the search box finds words in titles (the list above) and in what was written (below it)
async function searchMessages(q) {
  const list = $("message-hits");
  if (!q) {
    list.replaceChildren();
    list.hidden = true;
    return;
  }
  const { data } = await api("GET", "/v1/search/messages?limit=20&q=" + encodeURIComponent(q), undefined, { allow: true });
  if ($("search").value.trim() !== q) return; // a newer search is on its way
  list.replaceChildren(el("li", "hits-title", Array.isArray(data) && data.length ? "In messages" : "No message holds every word"));
  for (const h of Array.isArray(data) ? data : []) {
    const item = el("li");
    const button = el("button", "conv hit");
    button.type = "button";
    button.dataset.testid = "message-hit";
    button.dataset.id = h.conversation_id;
    button.dataset.seq = h.seq;
    const conv = (state.conversations || []).find((c) => c.id === h.conversation_id);
    button.append(el("span", "hit-where", (conv && conv.title ? conv.title : h.conversation_id) + " · " + h.role));
    button.append(el("span", "hit-text", h.snippet));
    button.title = h.snippet;
    button.addEventListener("click", () => openConversation(h.conversation_id).then(() => showMessage(h.seq)).catch(alertError));
    item.append(button);
    list.append(item);
  }
  list.hidden = false;
}

// the message found, scrolled to and marked until the next search
function showMessage(seq) {
  for (const m of document.querySelectorAll(".msg.found")) m.classList.remove("found");
  const item = document.querySelector('#timeline [data-seq="' + seq + '"]');
  if (!item) return;
  item.classList.add("found");
  item.scrollIntoView({ block: "center" });
}

async function newConversation() {
  const button = $("new-conversation");
  button.disabled = true;
  button.textContent = "Creating…";
  // what is typed now belongs to the new conversation: not sent to the one still open
  setComposerEnabled(false);
  let opened = false;
  try {
    // no title: the first message names it
    let created = await api("POST", "/v1/conversations", {}, { allow: true });
    if (created.status === 422 && /no default model/.test(JSON.stringify(created.data))) {
      const model = prompt("This service has no default model (abridged serve --model ...).\nWhich model should this conversation use? e.g. openai/gpt-4.1-mini");
      if (!model || !model.trim()) return;
      created = await api("POST", "/v1/conversations", { model: model.trim() }, { allow: true });
    }
    if (created.status >= 400) throw new Error(typeof created.data.detail === "string" ? created.data.detail : JSON.stringify(created.data.detail));
    const data = created.data;
    await loadConversations();
    await openConversation(data.id);
    opened = true;
  } finally {
    if (!opened && state.id) setComposerEnabled(true);
    button.disabled = false;
    button.textContent = "New";
  }
}

async function nameFromFirstMessage(text) {
  const conv = state.conversations.find((c) => c.id === state.id);
  if (!conv || conv.title) return;
  const title = text.replace(/\s+/g, " ").slice(0, 60);
  await api("PATCH", "/v1/conversations/" + state.id, { title });
  conv.title = title;
  $("title").textContent = title;
  await loadConversations();
  await refreshMeter();
}

async function rename(title) {
  const wanted = title === undefined ? prompt("Rename the conversation", $("title").textContent) : title;
  if (!wanted || !wanted.trim()) return;
  await api("PATCH", "/v1/conversations/" + state.id, { title: wanted.trim().slice(0, 200) });
  $("title").textContent = wanted.trim();
  await loadConversations();
  await refreshMeter();
}

async function refreshMeter() {
  // a PATCH makes the service read the conversation again: its size is then abridged's
  // estimate, no longer the provider's last report, and no meter event says so. The first
  // message's PATCH runs beside the turn: landed after the turn's own read, the ring kept the
  // report's figure. During a turn, the read after the turn does it (a read now could redraw
  // the timeline under the streamed reply).
  if (!state.streaming) await loadContext();
}

async function exportConversation() {
  const response = await api("GET", "/v1/conversations/" + state.id + "/export?format=abridged", undefined, { raw: true });
  if (!response.ok) throw new Error("export failed: HTTP " + response.status);
  const link = el("a");
  link.href = URL.createObjectURL(await response.blob());
  link.download = "conversation-" + state.id + ".json";
  document.body.append(link);
  link.click();
  link.remove();
  return "Exported to " + link.download;
}

async function deleteConversation() {
  if (!confirm("Delete this conversation and everything stored for it? This cannot be undone.")) return;
  await api("DELETE", "/v1/conversations/" + state.id + "?confirm=true");
  state.id = null;
  if (watcher) watcher.abort();
  location.hash = "";
  $("title").textContent = "No conversation";
  showModel(null);
  $("timeline").replaceChildren();
  $("sessions-panel").hidden = true;
  setComposerEnabled(false);
  await loadConversations();
  showWelcome();
}

function setComposerEnabled(enabled) {
  for (const b of document.querySelectorAll("#session-controls button, #send, #input")) b.disabled = !enabled;
}

async function openConversation(id) {
  state.id = id;
  location.hash = id;
  // enabled once the conversation is open: a message typed earlier would go to the old one,
  // or be wiped by the timeline's reload
  setComposerEnabled(false);
  let conv = state.conversations.find((c) => c.id === id);
  if (!conv) {
    // opened from a message found: the list may be filtered to other titles
    const got = await api("GET", "/v1/conversations/" + id, undefined, { allow: true });
    if (got.status < 400) conv = got.data;
  }
  $("title").textContent = conv ? conv.title || conv.id : id;
  showModel(conv ? conv.model : null);
  $("settings").hidden = true;
  $("compact-panel").hidden = true;
  $("inspector").hidden = true;
  for (const b of document.querySelectorAll(".conv")) b.classList.toggle("current", b.dataset.id === id);
  state.compactions = null;
  watchContext(id);
  try {
    await Promise.all([loadTimeline(), loadContext(), loadSessions()]);
  } finally {
    if (state.id === id) setComposerEnabled(true);
  }
}

// -- the conversation's model -----------------------------------------------------------------

const OTHER_MODEL = "\u0000other"; // the option that asks for a model string (any is allowed)

async function loadModels() {
  const { data } = await api("GET", "/v1/models");
  state.models = data;
}

function showModel(current) {
  const select = $("model");
  select.replaceChildren();
  const names = (state.models ? state.models.models : []).slice();
  if (current && !names.includes(current)) names.unshift(current);
  for (const name of names) {
    const option = el("option", null, name);
    option.value = name;
    select.append(option);
  }
  if (state.models && state.models.any) {
    const other = el("option", null, "Other model…");
    other.value = OTHER_MODEL;
    select.append(other);
  }
  select.value = current || "";
  select.dataset.current = current || "";
  select.disabled = !state.id;
  $("model-error").textContent = "";
}

// The next turn uses the model chosen; the history stays as it is (a context now over the new
// model's budget is compacted before its first call). A refused model leaves the old one.
async function changeModel() {
  const select = $("model");
  let wanted = select.value;
  if (wanted === OTHER_MODEL) {
    wanted = (prompt("Which model should this conversation use from now on? e.g. openai/gpt-4.1-mini") || "").trim();
    if (!wanted) {
      select.value = select.dataset.current;
      return;
    }
  }
  select.disabled = true;
  try {
    const { status, data } = await api("PATCH", "/v1/conversations/" + state.id, { model: wanted }, { allow: true });
    if (status >= 400) {
      select.value = select.dataset.current;
      // the error's fields say it shorter than its whole text (which repeats the list)
      $("model-error").textContent = data.setting === "model" && data.valid
        ? "Cannot use " + data.value + ": expected " + data.valid + "."
        : typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail);
      return;
    }
    const conv = state.conversations.find((c) => c.id === state.id);
    if (conv) conv.model = data.model;
    showModel(data.model);
    commandResult("Model: " + data.model + " from the next turn on.");
    await loadContext();
  } finally {
    select.disabled = !state.id;
  }
}

// -- sessions --------------------------------------------------------------------------------

function sessionGist(s) {
  // the server's line for it, as the chat's /resume lists it (the current session: its newest
  // request, not the summary it shares with the one before)
  if (s.gist) return s.gist;
  const lines = (s.summary || "").split("\n").map((l) => l.replace(/^[-*•\s]+/, "").trim());
  const useful = lines.filter((l) => l && !l.startsWith("#") && !l.startsWith("[") && !l.startsWith("<"));
  return useful.length ? useful[useful.length > 1 ? 1 : 0] : (s.messages + " messages");
}

async function loadSessions() {
  const id = state.id;
  const { data } = await api("GET", "/v1/conversations/" + id + "/sessions");
  if (id !== state.id) return data;
  const list = $("sessions");
  list.replaceChildren();
  for (const s of data) {
    const item = el("li");
    const label = "#" + s.number + " " + s.reason + " · " + sessionGist(s);
    const button = el("button", s.current ? "session current" : "session", label);
    button.type = "button";
    button.title = label;
    button.dataset.testid = "session";
    button.addEventListener("click", () => sessionCommand("resume", { session: "#" + s.number }).catch(alertError));
    item.append(button);
    list.append(item);
  }
  $("sessions-panel").hidden = data.length === 0;
  return data;
}

// -- the timeline ----------------------------------------------------------------------------

// A model string's own name: "http://host/v1#gpt-x" -> "gpt-x", "openai/gpt-x" as it is.
function modelName(model) {
  return model.includes("#") ? model.slice(model.lastIndexOf("#") + 1) : model;
}

function stats(m) {
  const line = el("div", "stats");
  line.dataset.testid = "stats";
  // which model answered: a conversation may change its model between turns
  const parts = m.model ? [modelName(m.model)] : [];
  parts.push(
    "in " + k(m.input_tokens),
    "cached " + k(m.cached_tokens),
    "out " + k(m.output_tokens),
    "first token " + ms(m.ttft_ms),
    "total " + ms(m.total_ms),
  );
  if (m.cost !== null && m.cost !== undefined) parts.push("$" + m.cost.toFixed(4));
  line.textContent = parts.join(" · ");
  return line;
}

function messageItem(m) {
  const item = el("li", "msg " + m.role + (m.kind ? " " + m.kind : ""));
  item.dataset.testid = "message";
  item.dataset.role = m.role;
  if (m.seq !== null && m.seq !== undefined) item.dataset.seq = m.seq;
  if (m.role === "tool") {
    const results = (m.message.parts || []).filter((p) => p.type === "tool_result");
    for (const r of results) {
      const details = el("details", "tool");
      details.dataset.testid = "tool-result";
      details.append(el("summary", null, (r.is_error ? "✗ " : "✓ ") + (r.name || "tool") + " result"));
      const text = (r.content || []).map((c) => c.text || "").join("\n");
      details.append(el("pre", null, text.length > 4000 ? text.slice(0, 4000) + "…" : text));
      item.append(details);
    }
    return item;
  }
  if (m.text) item.append(textNode(m.text, m.role === "assistant" && m.kind !== "command_output"));
  const calls = (m.message.parts || []).filter((p) => p.type === "tool_call");
  for (const c of calls) {
    const call = el("div", "tool-call", "→ " + c.name + " " + (typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments)));
    call.dataset.testid = "tool-call";
    item.append(call);
  }
  if (m.role === "assistant" && m.kind !== "command_output") item.append(stats(m));
  return item;
}

function compactionItem(c) {
  const item = el("li", "event compaction");
  item.dataset.testid = "compaction";
  const details = el("details");
  details.append(el("summary", null, "Compacted " + k(c.tokens_before) + " → " + k(c.tokens_after) + " (" + c.trigger + ")"));
  const card = el("pre", "summary-card", c.summary);
  card.dataset.testid = "summary-card";
  details.append(card);
  item.append(details);
  return item;
}

function noticeItem(text, kind) {
  const item = el("li", "event notice " + (kind || ""), text);
  item.dataset.testid = kind === "pruned" ? "prune" : "notice";
  return item;
}

async function loadTimeline() {
  const id = state.id;
  const { data } = await api("GET", "/v1/conversations/" + id + "/messages");
  if (id !== state.id) return;
  const entries = [];
  for (const m of data.messages) entries.push({ at: m.created_at, order: 0, node: messageItem(m) });
  for (const c of data.compactions) entries.push({ at: c.created_at, order: 1, node: compactionItem(c) });
  for (const n of state.notes[id] || []) entries.push({ at: n.at, order: 2, node: noteItem(n) });
  entries.sort((a, b) => at(a.at) - at(b.at) || a.order - b.order);
  state.compactions = data.compactions.length;
  $("timeline").replaceChildren(...entries.map((e) => e.node));
  scrollDown();
}

// -- the context ring ------------------------------------------------------------------------

function showMeter(m) {
  // the share of the window, as the CLI's meter shows it; the colour says where the trigger is
  const share = m.window ? m.context_tokens / m.window : 0;
  $("ring-front").setAttribute("stroke-dasharray", Math.min(100, Math.round(share * 100)) + " 100");
  $("ring-wrap").dataset.state = m.state;
  $("ring-label").textContent = Math.round(share * 100) + "%";
  const b = m.breakdown || {};
  $("ring-tip").textContent =
    "Context " + k(m.context_tokens) + " of a " + k(m.window) + " window (" + Math.round(share * 100) + "%)" +
    (m.window_known ? "" : " (unknown: the conservative default)") +
    "\ninput budget " + k(m.input_budget) + ", compaction at " + k(m.trigger) + ", down to " + k(m.target) +
    "\nsystem " + k(b.system) + " · tools " + k(b.tools) + " · summary " + k(b.summary) + " · messages " + k(b.messages) +
    "\nreported by the provider " + k(m.reported) + ", estimated since " + k(m.estimated);
}

async function loadContext() {
  const id = state.id;
  const { data } = await api("GET", "/v1/conversations/" + id + "/context");
  if (id !== state.id) return;
  if (state.compactions !== null && data.compactions !== state.compactions) {
    // a compaction (in the background too) adds its card and starts a session
    await Promise.all([loadTimeline(), loadSessions()]);
  }
  showMeter({
    context_tokens: data.tokens.total, window: data.window, window_known: data.window_known,
    input_budget: data.input_budget, trigger: data.trigger, target: data.target, state: data.state,
    reported: data.reported, estimated: data.estimated, breakdown: data.tokens,
  });
}

// -- sending: the streamed turn --------------------------------------------------------------

async function* events(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = "message";
      let data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      yield { name, data: data ? JSON.parse(data) : {} };
    }
  }
}

function noteItem(note) {
  if (note.kind === "error") return noticeItem(note.text, "error");
  const item = el("li", "event command-result", note.text);
  item.dataset.testid = "command-result";
  return item;
}

function keepNote(text, kind) {
  const note = { at: new Date().toISOString(), text, kind };
  (state.notes[state.id] || (state.notes[state.id] = [])).push(note);
  return note;
}

function recordError(text) {
  $("timeline").append(noteItem(keepNote(text, "error")));
  scrollDown();
}

async function send(event) {
  event.preventDefault();
  const text = $("input").value.trim();
  if (!text || !state.id || state.streaming) return;
  $("input").value = "";
  if (text.startsWith("/")) {
    await runCommand(text).catch((error) => recordError("Error: " + error.message));
    return;
  }
  nameFromFirstMessage(text).catch(alertError);
  state.streaming = true;
  $("send").disabled = true;
  const timeline = $("timeline");
  const mine = el("li", "msg user");
  mine.dataset.testid = "message";
  mine.append(el("div", "text", text));
  timeline.append(mine);
  let reply = null;
  const replyText = () => {
    if (!reply) {
      reply = el("li", "msg assistant streaming");
      reply.dataset.testid = "streaming-reply";
      reply.append(el("div", "text"));
      timeline.append(reply);
    }
    return reply.querySelector(".text");
  };
  let failed = null;
  try {
    const response = await api("POST", "/v1/conversations/" + state.id + "/messages", { content: text }, { raw: true });
    if (!response.ok) throw new Error((await response.json()).detail);
    for await (const e of events(response)) {
      if (e.name === "text") {
        replyText().textContent += e.data.text;
      } else if (e.name === "tool_started") {
        reply = null;
        const call = el("li", "event tool-call", "→ " + e.data.name + " " + e.data.arguments);
        call.dataset.testid = "tool-started";
        timeline.append(call);
      } else if (e.name === "tool_finished") {
        const done = el("li", "event tool-done", e.data.text);
        done.dataset.testid = "tool-finished";
        timeline.append(done);
      } else if (e.name === "notice") {
        if (e.data.kind && e.data.kind !== "usage_updated") timeline.append(noticeItem(e.data.text, e.data.kind));
      } else if (e.name === "meter") {
        showMeter(e.data);
      } else if (e.name === "queued") {
        timeline.append(noticeItem("Queued: another reply is in progress", "queued"));
      } else if (e.name === "error") {
        failed = "Error: " + (e.data.detail || e.data.message || JSON.stringify(e.data));
      }
      scrollDown();
    }
  } catch (error) {
    failed = "Error: " + error.message;
  } finally {
    state.streaming = false;
    $("send").disabled = false;
  }
  if (failed) keepNote(failed, "error");
  await loadTimeline().catch(alertError);
  await Promise.all([loadContext(), loadSessions()]).catch(alertError);
  if (!$("inspector").hidden) await loadCalls().catch(alertError);
}

// -- slash commands: the same as the chat's, handled here before anything reaches the model --

const COMMANDS = {
  "/help": "list the commands",
  "/status": "the context: window, budget, what it holds",
  "/compact [focus]": "preview a compaction, then confirm it",
  "/prune": "prune old tool output now",
  "/new": "start a new session from the current one's summary",
  "/clear": "start an empty session (the old one can be resumed)",
  "/resume [#n | id | words]": "list the sessions, or make one current again",
  "/rename TITLE": "rename the conversation",
  "/system [TEXT]": "show or set the system prompt",
  "/model [NAME]": "show or change the conversation's model",
  "/export": "download everything said, as JSON",
  "/delete": "delete the conversation (asks first)",
};

function commandResult(text) {
  $("timeline").append(noteItem(keepNote(text, "command")));
  scrollDown();
}

function plural(n, word) {
  return n + " " + word + (n === 1 ? "" : "s");
}

async function statusText() {
  const { data } = await api("GET", "/v1/conversations/" + state.id + "/context");
  const t = data.tokens;
  return [
    "Context: " + k(t.total) + " / " + k(data.window) + " window (" + Math.round((100 * t.total) / data.window) + "%)" + (data.window_known ? "" : ", window unknown"),
    "Input budget " + k(data.input_budget) + ", compaction at " + k(data.trigger) + ", down to " + k(data.target) + (data.auto_compact ? "" : " (automatic compaction off)"),
    "System " + k(t.system) + " · tools " + k(t.tools) + " · summary " + k(t.summary) + " · messages " + k(t.messages),
    plural(data.messages, "message") + " in context, " + plural(data.compactions, "compaction") + " so far",
  ].join("\n");
}

async function runCommand(line) {
  const name = line.split(/\s+/)[0];
  const argument = line.slice(name.length).trim();
  const lower = name.toLowerCase();
  if (lower === "/help") {
    commandResult(Object.entries(COMMANDS).map(([c, what]) => c.padEnd(28) + what).join("\n"));
  } else if (lower === "/status") {
    commandResult(await statusText());
  } else if (lower === "/compact") {
    await compactPreview(argument || null);
  } else if (lower === "/prune") {
    await prune();
  } else if (lower === "/new" || lower === "/clear") {
    await sessionCommand(lower.slice(1));
  } else if (lower === "/resume") {
    if (!argument) {
      const sessions = await loadSessions();
      commandResult(["Sessions (click one, or /resume #n):"].concat(
        sessions.map((s) => (s.current ? " * " : "   ") + "#" + s.number + " " + s.reason + " · " + sessionGist(s))).join("\n"));
    } else {
      await sessionCommand("resume", { session: argument });
    }
  } else if (lower === "/rename") {
    await rename(argument || undefined);
  } else if (lower === "/system") {
    if (!argument) {
      const { data } = await api("GET", "/v1/conversations/" + state.id);
      commandResult("System prompt: " + (data.system || "(none)"));
    } else {
      await api("PATCH", "/v1/conversations/" + state.id, { system: argument });
      commandResult("System prompt set.");
      await loadContext();
    }
  } else if (lower === "/model") {
    if (!argument) {
      const { data } = await api("GET", "/v1/conversations/" + state.id);
      commandResult("Model: " + (data.model || "(the service's default)"));
    } else {
      $("model").value = argument;
      if ($("model").value !== argument) {
        const option = el("option", null, argument);
        option.value = argument;
        $("model").append(option);
        $("model").value = argument;
      }
      await changeModel();
    }
  } else if (lower === "/export") {
    commandResult(await exportConversation());
  } else if (lower === "/delete") {
    await deleteConversation();
  } else {
    recordError("Unknown command " + name + " (/help lists them); nothing was sent to the model.");
  }
}

// -- compaction, prune, sessions, settings ---------------------------------------------------

function previewTable(preview) {
  const table = $("compact-table");
  table.replaceChildren();
  const head = el("tr");
  for (const h of ["", "before", "after"]) head.append(el("th", null, h));
  table.append(head);
  for (const part of ["system", "tools", "summary", "messages", "total"]) {
    const row = el("tr");
    row.append(el("td", null, part), el("td", null, k(preview.before[part])), el("td", null, k(preview.after[part])));
    table.append(row);
  }
}

async function compactPreview(focus) {
  state.focus = focus || null;
  const body = { dry_run: true };
  if (state.focus) body.focus = state.focus;
  const { data } = await api("POST", "/v1/conversations/" + state.id + "/compact", body);
  $("compact-panel").hidden = false;
  previewTable(data);
  const share = Math.round(100 * data.share_removed);
  $("compact-text").textContent = data.action === "nothing"
    ? "Nothing to compact: " + (data.detail || "")
    : (data.needs_confirm
      ? "This summarizes away " + share + "% of the context. Confirm to go ahead."
      : "About " + share + "% of the context will be summarized.") +
    (data.after_estimated
      ? " \"After\" holds the extractive summary made now: the model writes its own, under the same ceiling, so the result can differ."
      : "");
  $("compact-confirm").disabled = data.action === "nothing";
  $("compact-confirm").dataset.confirm = data.needs_confirm ? "1" : "";
}

async function compactConfirm() {
  $("compact-confirm").disabled = true;
  const body = { confirm: true };
  if (state.focus) body.focus = state.focus;
  const { data } = await api("POST", "/v1/conversations/" + state.id + "/compact", body);
  $("compact-text").textContent = data.notice || "Compaction: " + data.action;
  $("compact-panel").hidden = true;
  await Promise.all([loadTimeline(), loadContext()]);
}

async function prune() {
  const { data } = await api("POST", "/v1/conversations/" + state.id + "/prune", {});
  $("timeline").append(noticeItem(data.notice || "Nothing to prune", "pruned"));
  await loadContext();
}

async function sessionCommand(path, body) {
  const { data } = await api("POST", "/v1/conversations/" + state.id + "/sessions/" + path, body || {});
  await Promise.all([loadTimeline(), loadContext(), loadSessions()]);
  // the runtime stores a command's output in the timeline: show it once
  const shown = [...document.querySelectorAll("#timeline .msg")].some((n) => n.textContent.includes(data.text));
  if (!shown) $("timeline").append(noticeItem(data.text, "session"));
  scrollDown();
}

async function toggleSettings() {
  const panel = $("settings");
  panel.hidden = !panel.hidden;
  if (panel.hidden) return;
  const form = $("settings-form");
  // nothing can be changed or saved before the stored values are in: a choice made earlier
  // was overwritten by them, and a save sent the empty fields (a trigger of 0, refused)
  for (const field of form.elements) field.disabled = true;
  try {
    const { data } = await api("GET", "/v1/conversations/" + state.id + "/settings");
    form.auto_compact.checked = data.auto_compact;
    form.prune.checked = data.prune;
    form.trigger.value = data.trigger;
    form.target.value = data.target;
    form.summarizer.value = data.summarizer;
    const conv = await api("GET", "/v1/conversations/" + state.id);
    form.system.value = conv.data.system || "";
    $("settings-error").textContent = "";
  } finally {
    for (const field of form.elements) field.disabled = false;
  }
}

async function saveSettings(event) {
  event.preventDefault();
  const form = $("settings-form");
  const body = {
    auto_compact: form.auto_compact.checked,
    prune: form.prune.checked,
    trigger: Number(form.trigger.value),
    target: Number(form.target.value),
    summarizer: form.summarizer.value,
  };
  const { status, data } = await api("PATCH", "/v1/conversations/" + state.id + "/settings", body, { allow: true });
  if (status >= 400) {
    $("settings-error").textContent = typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail);
    return;
  }
  await api("PATCH", "/v1/conversations/" + state.id, { system: form.system.value });
  $("settings-error").textContent = "";
  $("settings").hidden = true;
  await loadContext();
}

// -- the call inspector: exactly what each model call sent --------------------------------------

const PARTS = ["system", "pinned", "summary", "pruned", "kept"];

async function toggleInspector() {
  const panel = $("inspector");
  panel.hidden = !panel.hidden;
  if (!panel.hidden) await loadCalls();
}

async function loadCalls() {
  const { data } = await api("GET", "/v1/conversations/" + state.id + "/calls");
  const table = $("calls");
  table.replaceChildren();
  const head = el("tr");
  for (const h of ["call", "sent (provider)", "cached", "out"].concat(PARTS, ["tool definitions"])) head.append(el("th", null, h));
  table.append(head);
  if (!data.length) {
    $("call-detail").replaceChildren(el("p", "hint", "No model call yet: a call shows here once its turn has ended."));
    return;
  }
  for (const c of data) {
    const row = el("tr", "call");
    row.dataset.testid = "call";
    row.append(el("td", null, "#" + (c.index + 1) + (c.retry ? " retry" : "") + (c.ok ? "" : " ✗")),
      el("td", null, k(c.input_tokens) + " (est. " + k(c.estimate) + ")"),
      el("td", null, k(c.cached_tokens)), el("td", null, k(c.output_tokens)));
    for (const part of PARTS) row.append(el("td", null, k(c.by_section[part])));
    row.append(el("td", null, k(c.tools)));
    row.addEventListener("click", () => {
      for (const r of table.querySelectorAll("tr.call")) r.classList.toggle("open", r === row);
      showCall(c.index).catch(alertError);
    });
    table.append(row);
  }
}

async function showCall(index) {
  const { data } = await api("GET", "/v1/conversations/" + state.id + "/calls/" + index);
  const box = $("call-detail");
  box.replaceChildren(el("h2", null, "Call #" + (index + 1) + ": " + data.messages + " messages, " + k(data.estimate) + " estimated, " + k(data.input_tokens) + " read by the provider (" + k(data.cached_tokens) + " from its cache)"));
  for (const m of data.sent) {
    const item = el("details", "sent " + m.section);
    item.dataset.testid = "sent-message";
    item.dataset.section = m.section;
    const head = el("summary");
    head.append(el("span", "badge", m.section), document.createTextNode(m.role + " · " + k(m.tokens) + " tokens"));
    if (m.cached) head.append(el("span", "cached-mark", "cached"));
    item.append(head);
    const calls = (m.message.parts || []).filter((p) => p.type === "tool_call").map((p) => "→ " + p.name + " " + (typeof p.arguments === "string" ? p.arguments : JSON.stringify(p.arguments)));
    const results = (m.message.parts || []).filter((p) => p.type === "tool_result").map((p) => (p.content || []).map((c) => c.text || "").join("\n"));
    item.append(el("pre", null, [m.text].concat(calls, results).filter(Boolean).join("\n")));
    box.append(item);
  }
  // the detail is below the table, inside the panel's own scroll: bring its heading up
  const panel = $("inspector");
  panel.scrollTop += box.getBoundingClientRect().top - panel.getBoundingClientRect().top - 8;
}

// -- replay ----------------------------------------------------------------------------------

async function replay(event) {
  event.preventDefault();
  const file = $("replay-file").files[0];
  if (!file) return;
  const window_ = encodeURIComponent($("replay-window").value.trim() || "16k");
  $("replay-status").textContent = "Replaying " + file.name + "…";
  const body = await file.arrayBuffer();
  const h = headers({ "Content-Type": "application/octet-stream" });
  const response = await fetch("/v1/replay?window=" + window_, { method: "POST", headers: h, body });
  const data = await response.json();
  if (!response.ok) {
    $("replay-status").textContent = "Error: " + data.detail;
    return;
  }
  $("replay-status").textContent = "Done in " + Number(data.totals.seconds || 0).toFixed(1) + " s";
  const result = $("replay-result");
  result.replaceChildren();
  const table = el("table");
  table.dataset.testid = "replay-table";
  const head = el("tr");
  for (const h2 of ["session", "calls", "prunes", "compactions", "largest context", "overflows"]) head.append(el("th", null, h2));
  table.append(head);
  for (const s of data.sessions) {
    const t = s.totals || s;
    const row = el("tr");
    row.append(el("td", null, s.id || s.session || ""), el("td", null, t.calls), el("td", null, t.prunes),
      el("td", null, t.compactions), el("td", null, k(t.max_context_tokens)), el("td", null, t.overflows));
    table.append(row);
  }
  result.append(table);
  const html = await fetch("/v1/replay?output=html&window=" + window_, { method: "POST", headers: h, body });
  if (html.ok) {
    const link = el("a", null, "Download the HTML report");
    link.href = URL.createObjectURL(await html.blob());
    link.download = "replay-report.html";
    result.append(link);
  }
}

// -- wiring ----------------------------------------------------------------------------------

function wire() {
  $("new-conversation").addEventListener("click", () => newConversation().catch(alertError));
  $("search").addEventListener("input", () => loadConversations().catch(alertError));
  $("composer").addEventListener("submit", send);
  $("input").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) send(e);
  });
  $("compact").addEventListener("click", () => compactPreview().catch(alertError));
  $("compact-confirm").addEventListener("click", () => compactConfirm().catch(alertError));
  $("compact-cancel").addEventListener("click", () => { $("compact-panel").hidden = true; });
  $("prune").addEventListener("click", () => prune().catch(alertError));
  $("session-new").addEventListener("click", () => sessionCommand("new").catch(alertError));
  $("session-clear").addEventListener("click", () => sessionCommand("clear").catch(alertError));
  $("session-resume").addEventListener("click", () => runCommand("/resume").catch(alertError));
  $("toggle-settings").addEventListener("click", () => toggleSettings().catch(alertError));
  $("settings-form").addEventListener("submit", (e) => saveSettings(e).catch(alertError));
  $("show-replay").addEventListener("click", () => { $("replay").hidden = false; });
  $("replay-close").addEventListener("click", () => { $("replay").hidden = true; });
  $("replay-form").addEventListener("submit", (e) => replay(e).catch(alertError));
  $("rename").addEventListener("click", () => rename().catch(alertError));
  $("inspect").addEventListener("click", () => toggleInspector().catch(alertError));
  $("export").addEventListener("click", () => exportConversation().then(commandResult).catch(alertError));
  $("delete").addEventListener("click", () => deleteConversation().catch(alertError));
  $("model").addEventListener("change", () => changeModel().catch(alertError));
}

// The context changes outside a turn too (a background compaction after the turn's stream has
// ended, another client): the server sends the open conversation's meter whenever it changes
// (GET /v1/conversations/{id}/events), and the ring and the timeline follow it.
let watcher = null;

async function watchContext(id) {
  if (watcher) watcher.abort();
  const controller = new AbortController();
  watcher = controller;
  let since = null; // the seq of the last meter had: a change missed between streams comes at once
  while (state.id === id && !controller.signal.aborted) {
    let pause = 5000; // after a failure
    try {
      // a quiet stream ends after a few seconds; the next one starts where it left off
      const url = "/v1/conversations/" + id + "/events" + (since === null ? "" : "?since=" + since);
      const response = await fetch(url, { headers: headers(), signal: controller.signal });
      if (response.ok) {
        pause = 0;
        for await (const e of events(response)) {
          if (state.id !== id) return;
          if (e.name !== "meter") continue;
          since = e.data.seq;
          showMeter(e.data);
          $("ring-wrap").dataset.updates = String(Number($("ring-wrap").dataset.updates || 0) + 1);
          // a compaction adds its card to the timeline
          if (!state.streaming) await loadContext().catch(() => {});
        }
      }
    } catch (error) {
      if (controller.signal.aborted) return;
      pause = 5000;
    }
    if (pause) await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

function alertError(error) {
  $("timeline").append(noticeItem("Error: " + error.message, "error"));
}

async function start() {
  wire();
  await Promise.all([loadConversations(), loadModels()]);
  const wanted = location.hash.slice(1);
  if (wanted && state.conversations.some((c) => c.id === wanted)) await openConversation(wanted);
  else showWelcome();
}

// What a first visit shows instead of an empty pane: how to start.
function showWelcome() {
  const models = (state.models && state.models.models) || [];
  const model = state.models && state.models.default ? modelName(state.models.default) : null;
  const item = el("li", "event welcome",
    (state.conversations.length ? "Pick a conversation on the left, or press New to start one" : "Press New to start a conversation") +
    (model ? " with " + model : models.length ? "" : " (the service has no default model: New asks for one)") +
    ". Type /help in a conversation for the commands; Inspect calls shows what each model call sent.");
  item.dataset.testid = "welcome";
  $("timeline").replaceChildren(item);
}

start().catch(alertError);
