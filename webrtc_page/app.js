// The appliance's voice page: WebRTC to the local server, live transcript, captions and latencies.
"use strict";
const $ = (id) => document.getElementById(id);
const AUDIBLE_RMS = 0.01;            // -40 dBFS: the benchmark's "audible" threshold (one 20 ms window)
const meter = { mic: [], bot: [] };  // [t_ms, rms] per 20 ms window, read by `appliance bench voice`
window.applianceMeter = meter;
let pc = null, events = null, micStream = null, audioCtx = null, botMsg = null, turnNo = 0, mode = null;
// Barge-in: the bot plays through `duck` (a GainNode); the person's onset at the mic lowers it at once (YIELD_GAIN:
// the bot yields, still heard, as a speaker does when someone starts to talk) and tells the server ("duck" on the
// data channel), which confirms (the bot is muted: it stopped) or releases (its level comes back). A backchannel
// ("mm-hm") or a knock thus never silences the bot, while the server needs its first words to tell them from an
// interruption. Only a server that said "ready" is ducked for (one without the appliance's playout never answers).
let channel = null, duck = null, ducked = false, duckTimer = null, botHeardAt = -1e9, duckable = false;
const YIELD_GAIN = 0.3;              // −10.5 dB while the server decides: quieter, and Piper's speech still audible
const DUCK_GIVE_UP_MS = 4000;        // no answer from the server: back to full level
const CONFIRMED_UNDUCK_MS = 500;     // after a confirmed barge-in the cut reply's last packets (~300 ms in flight) drain, muted
const bargeLog = []; window.applianceBargeLog = bargeLog;
// What the live transcript line showed, in order: "interim" (words while you speak) or "final" (the benchmark's interim_on_page).
const lineLog = []; window.applianceLineLog = lineLog;
// The meter's clock against the wall clock (ms), so the page's figures can be set beside the server's events.
window.applianceClock = () => (audioCtx ? [audioCtx.currentTime * 1000, performance.timeOrigin + performance.now()] : null);
// Events the conversation view shows itself; anything else (the agents' messages and decisions) goes to the activity log.
const CONVERSATION_EVENTS = new Set(["connected", "disconnected", "user_started_speaking", "barge_in_detected", "vad_stopped",
  "interim_transcript", "final_transcript", "llm_first_token", "tts_first_audio", "first_audio_sent", "bot_text",
  "interruption", "bot_stopped", "llm_reply", "asr", "turn", "error", "early_final", "speculation", "turn_held",
  "backchannel", "duck", "duck_released", "barge_in_confirmed", "llm_ttfb"]);
let lastMicAudible = null, botSilentSince = 0, botAudible = false, pendingRow = null;
let recorded = false, lastPcId = null;  // the last call's recording, which the person may delete once it has ended

function setStatus(text, state) { $("status").textContent = text; $("dot").className = "dot " + (state || ""); }

async function pollStatus() {
  try {
    const s = await (await fetch("/api/status")).json();
    if (s.error) { setStatus("Failed to start: " + s.error, "error"); return; }
    if (s.ready) {
      setStatus("Ready — click Connect and talk.", "ready"); $("connect").disabled = false;
      if ($("record").disabled) { $("record").checked = !!s.recording_default; $("record").disabled = false; }
      if ((s.modes || []).includes("form")) {
        $("form-card").hidden = false; $("form-start").disabled = false;
        if (s.demo_forms && !$("form-url").value) $("form-url").value = s.demo_forms.flight;
      }
      if ((s.modes || []).includes("werewolf")) {
        $("ww-card").hidden = false; $("ww-start").disabled = false;
        const ww = s.werewolf || {};
        if (ww.seats) $("ww-seats").value = String(ww.seats);
        if (ww.seed !== undefined && !$("ww-seed").value) $("ww-seed").value = ww.seed;
      }
      return;
    }
    setStatus("Starting: " + s.stage + "…");
  } catch (e) { setStatus("Cannot reach the appliance server.", "error"); }
  setTimeout(pollStatus, 500);
}

function attachMeter(source, key) {
  const node = new AudioWorkletNode(audioCtx, "meter");
  node.port.onmessage = (e) => onLevel(key, e.data.t_ms, e.data.rms);
  const sink = audioCtx.createGain(); sink.gain.value = 0; source.connect(node); node.connect(sink); sink.connect(audioCtx.destination);
}

// The bot's audio: stream → (level before the duck, to know the bot is talking) → duck → speakers, metered after the
// duck (what the person hears; the benchmark reads that). The <audio> element stays muted: Chrome only pulls a
// remote WebRTC stream into WebAudio while a media element plays it.
function playBot(stream) {
  $("bot-audio").srcObject = stream; $("bot-audio").muted = true;
  const src = audioCtx.createMediaStreamSource(stream);
  const raw = new AudioWorkletNode(audioCtx, "meter");
  raw.port.onmessage = (e) => { if (e.data.rms > AUDIBLE_RMS) botHeardAt = e.data.t_ms; };
  const sink = audioCtx.createGain(); sink.gain.value = 0; src.connect(raw); raw.connect(sink); sink.connect(audioCtx.destination);
  duck = audioCtx.createGain(); src.connect(duck); duck.connect(audioCtx.destination);
  attachMeter(duck, "bot");
}

// "open" (full level), "yield" (the person's onset: lowered until the server decides), "muted" (a confirmed barge-in)
function setDuck(state) {
  ducked = state !== "open"; clearTimeout(duckTimer);
  const gain = { open: 1, yield: YIELD_GAIN, muted: 0 }[state];
  if (duck) duck.gain.setTargetAtTime(gain, audioCtx.currentTime, state === "open" ? 0.01 : 0.003);
  if (state === "yield") duckTimer = setTimeout(() => setDuck("open"), DUCK_GIVE_UP_MS);
  if (state === "muted") duckTimer = setTimeout(() => setDuck("open"), CONFIRMED_UNDUCK_MS);
}

function onOnset(tMs) {
  // Only a sound while the bot talks can be a barge-in; the server decides what it was.
  bargeLog.push([tMs, `onset (duckable ${duckable}, ducked ${ducked}, bot heard ${Math.round(tMs - botHeardAt)} ms ago)`]);
  if (!duckable || ducked || !channel || channel.readyState !== "open" || tMs - botHeardAt > 300) return;
  setDuck("yield"); bargeLog.push([audioCtx.currentTime * 1000, "duck"]);  // when it was lowered
  channel.send(JSON.stringify({ type: "duck", t_ms: tMs }));
}

function onServerMessage(m) {
  if (m.type === "barge_in") bargeLog.push([audioCtx ? audioCtx.currentTime * 1000 : 0, m.state]);
  if (m.type === "barge_in" && m.state === "ready") { duckable = true; return; }
  if (m.type !== "barge_in") return;
  if (m.state === "confirmed") setDuck("muted");  // ducked or not (the server's VAD may have caught it first)
  else if (m.state === "released" && ducked) setDuck("open");
}

function onLevel(key, t, rms) {
  meter[key].push([Math.round(t * 10) / 10, Math.round(rms * 1e5) / 1e5]);
  if (key === "mic") {
    $("mic-level").style.width = Math.min(100, rms * 400) + "%";
    if (rms > AUDIBLE_RMS) lastMicAudible = t;
    return;
  }
  if (rms > AUDIBLE_RMS) {
    if (!botAudible && t - botSilentSince > 300 && lastMicAudible !== null && pendingRow) {
      pendingRow.lastElementChild.textContent = Math.round(t - lastMicAudible);
      pendingRow = null;
    }
    botAudible = true;
  } else if (botAudible) { botAudible = false; botSilentSince = t; }
}

function addMsg(who, text) {
  const t = $("transcript"); const empty = t.querySelector(".empty"); if (empty) empty.remove();
  const div = document.createElement("div"); div.className = "msg " + who;
  div.innerHTML = `<span class="who">${who === "user" ? "You" : "Appliance"}</span><span class="text"></span>`;
  div.querySelector(".text").textContent = text; t.appendChild(div); t.scrollTop = t.scrollHeight;
  return div;
}

function onEvent(ev) {
  if (ev.event.startsWith("ww_")) { onWerewolf(ev); return; }
  if (FORM_EVENTS.has(ev.event)) onForm(ev);
  if (ev.event === "preview_focus") return;  // drawn on the preview, not logged
  switch (ev.event) {
    case "interim_transcript": $("interim").textContent = ev.text; lineLog.push("interim"); break;
    case "final_transcript": $("interim").textContent = ""; addMsg("user", ev.text); lineLog.push("final"); break;
    case "backchannel": {  // said while the bot talked, and it went on: shown aside
      const lines = [...document.querySelectorAll(".msg.user")]; const last = lines[lines.length - 1];
      if (last && last.querySelector(".text").textContent === ev.text) last.classList.add("aside");
      break;
    }
    case "bot_text":
      if (!botMsg) botMsg = addMsg("bot", ev.text);
      else botMsg.querySelector(".text").textContent += " " + ev.text;
      break;
    case "interruption": if (botMsg) { botMsg.classList.add("cut"); botMsg = null; } break;
    case "turn": {
      botMsg = null;  // a new reply begins: its words get their own line
      const row = document.createElement("tr"); turnNo += 1;
      const cols = [turnNo, ev.vad_stopped_ms, ev.final_transcript_ms, ev.llm_first_token_ms, ev.tts_first_audio_ms, ev.first_audio_sent_ms, "…"];
      row.innerHTML = cols.map((c) => `<td>${c === undefined ? "–" : (typeof c === "number" ? Math.round(c) : c)}</td>`).join("");
      $("latency").querySelector("tbody").prepend(row); pendingRow = row; break;
    }
    case "error": setStatus(ev.error, "error"); break;
    case "agent_done": $("form-cancel").hidden = true; $("ww-start").disabled = false; break;
    case "type_requested": askToType(ev.field, ev.label); break;  // the phone agent offers the field's box
    case "recording_notice":
      recorded = ev.recorded;
      $("record-where").textContent = ev.recorded ? "Recorded on this appliance in " + ev.folder : "Not recorded"; break;
    case "call_ended": disconnect("The call has ended: " + ev.reason + "."); break;
  }
  if (!CONVERSATION_EVENTS.has(ev.event)) logActivity(ev);
}

// --- Fill a form: the agent's browser live, the field it works on, the values and their state ---
const FORM_EVENTS = new Set(["form_started", "bus_out", "preview_focus", "form_finished", "agent_done", "error"]);
const STATES = { ask: "to ask", heard: "heard", confirmed: "confirmed", "in-page": "in the page", refused: "refused",
                 yours: "yours to set", typed: "typed by you" };
const form = { live: false, fields: new Map(), viewport: [1280, 720], frameUrl: null, state: null };

// The form's progress in words, from the field table and the computer agent's last state.
function formProgress(state) {
  if (state) form.state = state;
  const all = [...form.fields.values()];
  const done = all.filter((f) => ["in-page", "typed"].includes(f.state)).length;
  const yours = all.filter((f) => f.state === "yours").length;
  const stateWords = { "auth-required": "Everything is filled in: waiting for your yes to submit.",
                      review: "Filled in and not submitted: waiting for your review.", working: "Working on the form…" };
  let text = all.length ? `${done} of ${all.length} fields filled in` : "Opening the form…";
  if (yours) text += `; ${yours} for you to set in the preview`;
  if (all.length) text += ".";
  if (form.state && stateWords[form.state]) text += " " + stateWords[form.state];
  $("form-progress").textContent = text;
}

function formReset() {
  form.state = null; $("form-progress").textContent = "";
  form.fields.clear(); $("form-values").querySelector("tbody").innerHTML = "";
  $("preview-focus").hidden = true; $("preview-empty").hidden = false;
  if (form.frameUrl) URL.revokeObjectURL(form.frameUrl);
  form.frameUrl = null; $("preview-img").removeAttribute("src");
  $("form-review").hidden = true; $("form-review").classList.remove("done"); $("form-submit").hidden = true;
}

function fieldRow(spec) {
  let f = form.fields.get(spec.name);
  if (f) return f;
  const tr = document.createElement("tr");
  tr.innerHTML = '<td class="label"></td><td class="value"></td><td><span class="badge"></span><span class="note"></span></td>' +
                 '<td><form class="typed"><input aria-label="Type the value"><button type="submit" class="secondary">Set</button></form></td>';
  tr.querySelector(".label").textContent = spec.label || spec.name;
  f = { spec, tr, value: null, state: "ask" };
  const input = tr.querySelector("input");
  if (spec.type === "checkbox") input.placeholder = "yes or no";
  else if (spec.options) input.placeholder = spec.options.slice(0, 3).join(" / ") + (spec.options.length > 3 ? " …" : "");
  else if (spec.format_hint) input.placeholder = spec.format_hint;
  if (spec.type === "password") input.type = "password";
  tr.querySelector("form").addEventListener("submit", (e) => { e.preventDefault(); typeValue(f, input); });
  form.fields.set(spec.name, f); $("form-values").querySelector("tbody").appendChild(tr);
  return f;
}

function setField(name, changes) {
  const f = form.fields.get(name) || fieldRow({ name, label: name });
  Object.assign(f, changes);
  const shown = f.value === null || f.value === undefined ? "" :
    (typeof f.value === "boolean" ? (f.value ? "yes" : "no") : (Array.isArray(f.value) ? f.value.join(", ") : String(f.value)));
  f.tr.querySelector(".value").textContent = f.spec.type === "password" && shown ? "••••" : shown;
  const badge = f.tr.querySelector(".badge");
  badge.textContent = STATES[f.state] || f.state; badge.className = "badge " + f.state;
  f.tr.querySelector(".note").textContent = changes.note !== undefined ? changes.note : (f.note || "");
  formProgress();
}

function askToType(name, label) {
  // the value keeps being misheard: the phone agent asks the person to spell it or type it in its row's box
  const f = fieldRow({ name, label });
  form.fields.forEach((g) => g.tr.classList.toggle("asked", g === f));
  setField(name, { note: "Type it here if that is easier." });
  f.tr.scrollIntoView({ block: "nearest" }); f.tr.querySelector("input").focus();
}

async function typeValue(f, input) {
  const text = input.value.trim();
  if (!text || !window.appliancePcId) return;
  let value = text;
  if (f.spec.type === "checkbox") value = /^(y|yes|true|on|1)$/i.test(text);
  else if (["multiselect", "checkboxes"].includes(f.spec.type)) value = text.split(",").map((v) => v.trim()).filter(Boolean);
  const r = await fetch("/api/form/value", { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ pc_id: window.appliancePcId, field: f.spec.name, value }) });
  if (r.ok) { input.value = ""; f.tr.classList.remove("asked"); setField(f.spec.name, { value, state: "typed", note: "" }); }
  else setField(f.spec.name, { note: (await r.json()).error || r.statusText });
}

function onForm(ev) {
  switch (ev.event) {
    case "form_started":
      formReset(); form.live = true; $("form-live").hidden = false; previewLoop(window.appliancePcId); break;
    case "bus_out": onFormMessage(ev.agent, ev.type, ev.payload || {}); break;
    case "preview_focus": drawFocus(ev.box); break;
    case "form_finished": {
      form.live = false; drawFocus(null);
      const said = { submitted: "Submitted: " + (ev.detail || "the page confirmed it."), not_submitted: "Not submitted: " + ev.detail,
                     terminated: "Cancelled: the form was not submitted.", failed: "The form could not be done: " + ev.detail };
      $("form-review").hidden = false; $("form-review").classList.add("done"); $("form-submit").hidden = true;
      $("form-review-text").textContent = said[ev.status] || ev.status;
      $("form-progress").textContent = said[ev.status] || ev.status;
      break;
    }
    case "agent_done": case "error": form.live = false; break;
  }
}

function onFormMessage(agent, type, p) {
  if (type === "need_info") { (p.fields || []).forEach((spec) => { fieldRow(spec); setField(spec.name, {}); }); return; }
  if (type === "info_collected") {
    setField(p.field, { value: p.value, state: agent === "page" ? "typed" : (p.confirmed ? "confirmed" : "heard"), note: "" });
  } else if (type === "field_filled") setField(p.field, { value: p.value_read_back, state: "in-page", note: "" });
  else if (type === "format_invalid") {
    setField(p.field, { state: "refused", note: p.candidates && p.candidates.length ? "pick one: " + p.candidates.join(" · ") : "needs " + p.expected });
  } else if (type === "fill_error" && p.field !== "page") setField(p.field, { state: "refused", note: p.reason });
  else if (type === "step_failed" && p.field) setField(p.field, { state: "yours", note: p.advice });
  if (type === "status_update") formProgress(p.state);
  if (type === "status_update" && p.state === "review") {
    $("form-review").hidden = false; $("form-submit").hidden = false;
    $("form-review-text").textContent = "Filled in and not submitted. Check it in the preview, then submit it there " +
      "yourself or press “Submit it now” — or Cancel.";
  }
}

function drawFocus(box) {
  const el = $("preview-focus"), [vw, vh] = form.viewport;
  if (!box || !box.width) { el.hidden = true; return; }
  Object.assign(el.style, { left: (100 * box.x / vw) + "%", top: (100 * box.y / vh) + "%",
                            width: (100 * box.width / vw) + "%", height: (100 * box.height / vh) + "%" });
  el.hidden = false;
}

async function previewLoop(pcId) {
  // each request answers with the first picture newer than the last one shown (the server waits up to 2 s for it)
  let seq = 0;
  while (form.live && pcId && window.appliancePcId === pcId) {
    try {
      const r = await fetch(`/api/form/preview?pc_id=${encodeURIComponent(pcId)}&after=${seq}`, { cache: "no-store" });
      if (r.status === 200) {
        seq = Number(r.headers.get("X-Frame-Seq")) || seq + 1;
        const [w, h] = (r.headers.get("X-Viewport") || "").split("x").map(Number);
        if (w && h) form.viewport = [w, h];
        const url = URL.createObjectURL(await r.blob());
        $("preview-img").src = url; $("preview-empty").hidden = true;
        if (form.frameUrl) URL.revokeObjectURL(form.frameUrl);
        form.frameUrl = url;
        drawFocus(JSON.parse(r.headers.get("X-Focus") || "null"));
      } else if (r.status !== 204) await new Promise((ok) => setTimeout(ok, 500));  // not started yet, or over
    } catch (e) { await new Promise((ok) => setTimeout(ok, 500)); }
  }
}

function previewPoint(e) {
  const img = $("preview-img"), [vw, vh] = form.viewport;
  return { x: Math.round(e.offsetX * vw / img.clientWidth), y: Math.round(e.offsetY * vh / img.clientHeight) };
}

async function previewSend(path, body) {
  if (!window.appliancePcId) return;
  await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" },
                      body: JSON.stringify({ pc_id: window.appliancePcId, ...body }) });
}

const PREVIEW_KEYS = new Set(["Backspace", "Delete", "Tab", "Enter", "Escape", "ArrowUp", "ArrowDown", "ArrowLeft",
                              "ArrowRight", "Home", "End", "PageUp", "PageDown"]);
$("preview-img").addEventListener("click", (e) => { $("preview-img").focus(); previewSend("/api/form/preview/click", previewPoint(e)); });
$("preview-img").addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey || !(e.key.length === 1 || PREVIEW_KEYS.has(e.key))) return;
  e.preventDefault(); previewSend("/api/form/preview/key", { key: e.key });
});
$("form-submit").addEventListener("click", () => { $("form-submit").hidden = true; previewSend("/api/form/submit", {}); });

// --- Werewolf: the table as the user seat knows it (the server sends only that seat's view) ---
const PHASES = { night: "Night", day: "Day", vote: "Vote", resolution: "Resolution", over: "Game over" };
// claims: seat → its last claim in words; ballots: the last revealed vote {round, votes}, until the next day
const ww = { seat: null, seats: [], alive: [], speaking: null, roles: null, claims: {}, ballots: null };

function wwCaption(cls, who, text) {
  const li = document.createElement("li"); li.className = cls;
  if (who) { const b = document.createElement("span"); b.className = "who"; b.textContent = who; li.appendChild(b); }
  li.appendChild(document.createTextNode(text));
  const list = $("ww-captions"); list.appendChild(li); list.scrollTop = list.scrollHeight;
}

function wwSeats() {
  const ul = $("ww-seat-list"); ul.innerHTML = "";
  for (const seat of ww.seats) {
    const li = document.createElement("li");
    const dead = !ww.alive.includes(seat);
    li.className = [seat === ww.seat ? "you" : "", dead ? "dead" : "", seat === ww.speaking ? "speaking" : ""].join(" ").trim();
    const label = ww.roles ? ww.roles[seat]
      : (seat === ww.seat ? "you" : (dead ? "dead" : (seat === ww.speaking ? "🔊 speaking" : "alive")));
    li.innerHTML = "<b></b><small></small><span class=\"claim\"></span><span class=\"ballot\"></span>";
    li.querySelector("b").textContent = seat; li.querySelector("small").textContent = label;
    li.querySelector(".claim").textContent = ww.claims[seat] || "";
    if (ww.ballots && seat in ww.ballots.votes) {
      const target = ww.ballots.votes[seat];
      li.querySelector(".ballot").textContent = target ? `voted ${target}` : "abstained";
    }
    li.title = (dead ? seat + " is dead" : seat + " is alive") + (ww.claims[seat] ? ` · last claim: ${ww.claims[seat]}` : "");
    ul.appendChild(li);
  }
}

function wwSpeaking(text, you) { $("ww-speaking").textContent = text; $("ww-speaking").className = "ww-speaking" + (you ? " you" : ""); }

function onWerewolf(ev) {
  switch (ev.event) {
    case "ww_started":
      Object.assign(ww, { seat: ev.seat, seats: ev.seats, alive: ev.seats.slice(), speaking: null, roles: null, claims: {}, ballots: null });
      $("ww-table").hidden = false; $("ww-you").textContent = `You are ${ev.seat}, the ${ev.role} · seed ${ev.seed}`;
      wwSeats(); break;
    case "ww_table":
      Object.assign(ww, { seat: ev.seat, seats: ev.seats, alive: ev.alive });
      if (ev.phase === "day" && ww.ballots && ev.round > ww.ballots.round) ww.ballots = null;  // a new day: new ballots to come
      $("ww-phase").textContent = ev.phase === "over" ? PHASES.over : `${PHASES[ev.phase] || ev.phase} ${ev.round}`;
      $("ww-phase").className = "ww-phase " + ev.phase;
      $("ww-you").textContent = `You are ${ev.seat}, the ${ev.role}` + (ev.alive.includes(ev.seat) ? "" : " (dead)");
      wwSeats(); break;
    case "ww_speaker":
      ww.speaking = ev.seat;
      if (ev.seat === ww.seat) wwSpeaking("Your turn", true);
      else if (!ev.seat) wwSpeaking(ev.phase === "night" ? "The table sleeps…" : "");
      else wwSpeaking(`${ev.seat} is ${ev.phase === "vote" ? "voting" : "speaking"}…`);
      wwSeats(); break;
    case "ww_caption": wwCaption(ev.seat === ww.seat ? "you" : "", ev.seat === ww.seat ? "You" : ev.seat, ev.text); break;
    case "ww_playing":  // that seat's speech is heard now, in its own voice: its name on the card
      ww.speaking = ev.seat; wwSeats();
      wwSpeaking(`🔊 ${ev.seat} speaking` + (ev.voice ? ` (${ev.voice} voice)` : "")); break;
    case "ww_claim": ww.claims[ev.seat] = ev.text; wwSeats(); break;
    case "ww_ballots": ww.ballots = { round: ev.round, votes: ev.votes }; wwSeats(); break;
    case "ww_recap": wwCaption("you", "Asked", ev.question); wwCaption("recap", "Recap", ev.text); break;
    case "ww_log": wwCaption("log", "", ev.text); break;
    case "ww_ask": wwCaption("judge", "Judge", ev.question); wwSpeaking("Your turn — speak now", true); break;
    case "ww_heard": wwCaption("you", "Heard", ev.transcript || "(nothing)"); break;
    case "ww_retry": wwCaption("retry", "", "That was not a clear, legal choice: asked again."); break;
    case "ww_applied": wwSpeaking(""); break;
    case "ww_over":
      ww.roles = ev.roles; ww.speaking = null; wwSeats(); wwSpeaking("");
      $("ww-phase").textContent = PHASES.over; $("ww-phase").className = "ww-phase over";
      wwCaption("over", "", ev.status === "failed_closed" ? "The game stopped: no legal choice was understood after the retries."
        : `The ${ev.winner} win after ${ev.complete_rounds} full round${ev.complete_rounds === 1 ? "" : "s"}.`);
      break;
  }
}

function logActivity(ev) {
  const li = document.createElement("li");
  const details = Object.entries(ev).filter(([k]) => !["t_ms", "ts", "event"].includes(k))
    .map(([k, v]) => `${k}: ${typeof v === "object" ? JSON.stringify(v) : v}`).join(", ");
  li.innerHTML = `<b></b> <span></span>`;
  li.querySelector("b").textContent = ev.event.replaceAll("_", " ");
  li.querySelector("span").textContent = details;
  $("activity").appendChild(li); $("activity").scrollTop = $("activity").scrollHeight;
}

async function connect(offerExtra) {
  mode = offerExtra ? offerExtra.mode : null;
  $("connect").disabled = true; setStatus("Connecting…");
  // the person's choice, before any audio: a call not recorded stores nothing (issue 30)
  offerExtra = { ...(offerExtra || {}), record: $("record").checked };
  $("record").disabled = true; $("delete-recording").hidden = true; $("record-where").textContent = ""; recorded = false;
  try {
    micStream = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true } });
    audioCtx = new AudioContext();
    await audioCtx.audioWorklet.addModule("/static/meter-worklet.js");
    await audioCtx.audioWorklet.addModule("/static/onset-worklet.js");
    const mic = audioCtx.createMediaStreamSource(micStream);
    attachMeter(mic, "mic");
    const onset = new AudioWorkletNode(audioCtx, "onset");
    onset.port.onmessage = (e) => { if (e.data.type === "onset") onOnset(e.data.t_ms); };
    const quiet = audioCtx.createGain(); quiet.gain.value = 0; mic.connect(onset); onset.connect(quiet); quiet.connect(audioCtx.destination);
    // the operator's STUN/TURN servers (transport.ice_servers; TURN credentials minted for this call)
    const ice = await fetch("/api/ice");
    if (!ice.ok) throw new Error((await ice.json()).error || ice.statusText);
    pc = new RTCPeerConnection({ iceServers: (await ice.json()).ice_servers }); window.pcRef = pc;
    channel = pc.createDataChannel("appliance");
    channel.onmessage = (e) => { try { onServerMessage(JSON.parse(e.data)); } catch (_) { /* not ours */ } };
    micStream.getAudioTracks().forEach((tr) => pc.addTrack(tr, micStream));
    pc.ontrack = (e) => {
      // the appliance is on this machine or the LAN: the smallest jitter buffer Chrome allows (NetEq's own minimum)
      if ("jitterBufferTarget" in e.receiver) e.receiver.jitterBufferTarget = 0;
      playBot(e.streams[0] || new MediaStream([e.track]));
    };
    pc.onconnectionstatechange = () => {
      if (pc && pc.connectionState === "connected") { setStatus("Connected — talk any time, interrupt any time.", "live"); }
      if (pc && ["failed", "closed"].includes(pc.connectionState)) { disconnect("Connection " + pc.connectionState + "."); }
    };
    await pc.setLocalDescription(await pc.createOffer());
    await new Promise((resolve) => {
      if (pc.iceGatheringState === "complete") return resolve();
      pc.addEventListener("icegatheringstatechange", () => pc.iceGatheringState === "complete" && resolve());
      setTimeout(resolve, 2000);
    });
    const r = await fetch("/api/offer", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ sdp: pc.localDescription.sdp, type: pc.localDescription.type, ...offerExtra }) });
    const answer = await r.json();
    if (!r.ok) throw new Error(answer.error || r.statusText);
    window.appliancePcId = answer.pc_id;
    await pc.setRemoteDescription(answer);
    events = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/api/events?pc_id=${encodeURIComponent(answer.pc_id)}`);
    events.onmessage = (m) => onEvent(JSON.parse(m.data));
    $("connect").textContent = "Disconnect"; $("connect").classList.add("live"); $("connect").disabled = false;
    if (mode === "form") { $("form-cancel").hidden = false; $("form-start").disabled = true; }
    if (mode === "werewolf") $("ww-start").disabled = true;
  } catch (e) {
    disconnect("Could not connect: " + e.message);
  }
}

function disconnect(message) {
  if (window.appliancePcId) fetch("/api/disconnect?pc_id=" + encodeURIComponent(window.appliancePcId), { method: "POST" });
  lastPcId = window.appliancePcId || lastPcId;
  $("record").disabled = false; $("delete-recording").hidden = !(recorded && lastPcId);
  if (events) events.close(); if (pc) pc.close(); if (micStream) micStream.getTracks().forEach((t) => t.stop());
  if (audioCtx) audioCtx.close();
  clearTimeout(duckTimer);
  events = pc = micStream = audioCtx = channel = duck = null; ducked = duckable = false; window.appliancePcId = null; mode = null;
  $("form-cancel").hidden = true; $("form-start").disabled = false; $("ww-start").disabled = false;
  $("connect").textContent = "Connect"; $("connect").classList.remove("live"); $("connect").disabled = false;
  setStatus(message || "Disconnected.", message && message.startsWith("Could") ? "error" : "ready");
}

$("connect").addEventListener("click", () => (pc ? disconnect() : connect()));
$("delete-recording").addEventListener("click", async () => {
  const r = await fetch("/api/recording/delete?pc_id=" + encodeURIComponent(lastPcId), { method: "POST" });
  const body = await r.json();
  $("record-where").textContent = r.ok ? "The recording of that call is deleted." : "Not deleted: " + body.error;
  if (r.ok) { $("delete-recording").hidden = true; recorded = false; }
});
$("form-start").addEventListener("click", async () => {
  const url = $("form-url").value.trim();
  if (!/^https?:\/\//.test(url)) { setStatus("Give the form's full address (http://…).", "error"); return; }
  if (pc) disconnect();
  $("activity").innerHTML = ""; formReset();
  await connect({ mode: "form", url, autonomous: $("form-autonomous").checked, task: $("form-task").value.trim() });
});
$("form-cancel").addEventListener("click", () => {
  if (window.appliancePcId) fetch("/api/form/cancel?pc_id=" + encodeURIComponent(window.appliancePcId), { method: "POST" });
});
$("ww-start").addEventListener("click", async () => {
  if (pc) disconnect();
  $("ww-captions").innerHTML = ""; $("ww-seat-list").innerHTML = ""; $("ww-table").hidden = true;
  const offer = { mode: "werewolf", seats: Number($("ww-seats").value) };
  const seed = $("ww-seed").value.trim();
  if (seed !== "") offer.seed = Number(seed);
  await connect(offer);
});
$("transcript").innerHTML = '<p class="empty">Click Connect and say something.</p>';
pollStatus();
