// The companion page: one WebSocket brings the table; entries go back as plain HTTP posts whose replies say
// "taken" or why not. No framework: the whole page is redrawn from each state message, which is small.
"use strict";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
let viewer = params.get("viewer") || "";
let socket = null;
let lastState = null;
let spokenSeq = 0;
let hintShown = null;  // {moves, text}: a hint asked for on the page, until the table changes

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "onclick") node.addEventListener("click", v);
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

async function post(path, body) {
  const reply = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}) });
  let data = {};
  try { data = await reply.json(); } catch (e) { data = { error: `the server answered ${reply.status}` }; }
  if (!reply.ok || data.ok === false) {
    const detail = data.error || (Array.isArray(data.detail) ? data.detail.map((d) => d.msg).join("; ") : data.detail);
    showError(detail || `refused (${reply.status})`);
    return false;
  }
  showError("");
  return data;
}

function showError(text) {
  $("error").textContent = text;
  $("error").hidden = !text;
}

const act = (text) => post("/api/act", { text });

function connect() {
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws${viewer ? "?viewer=" + viewer : ""}`;
  socket = new WebSocket(url);
  socket.onopen = () => { $("connection").textContent = "live"; $("connection").className = "pill on"; $("log").replaceChildren(); };
  socket.onmessage = (msg) => render(JSON.parse(msg.data));
  socket.onclose = () => {
    $("connection").textContent = "reconnecting…"; $("connection").className = "pill off";
    setTimeout(connect, 1000);
  };
}

function render(s) {
  lastState = s;
  document.title = `${s.title} - Tabletop Companion`;
  $("title").textContent = s.title;
  $("status").textContent = s.status || "";
  $("speech-status").textContent = s.speech.status || "";
  $("mute").checked = !!s.speech.muted;
  if (s.speech.rate) $("rate").value = s.speech.rate;
  document.body.dataset.moves = s.moves;
  document.body.dataset.mode = s.mode;
  $("entry").placeholder = s.mode === "camera" ? "what really happened at the last move, e.g. explore 7" : "type what happened, e.g. roll 2 17 or rifts 1 2 0";
  $("undo").textContent = s.mode === "camera" ? "Nothing happened" : "Undo";
  $("actions-title").hidden = s.mode !== "camera";
  renderViewer(s);
  if (s.video && $("video-box").hidden) { $("video-box").hidden = false; $("video").src = "/video.mjpg"; showTableSetup(); }
  $("headline").textContent = s.panel.headline;
  $("table").replaceChildren(...s.panel.sections.map(renderSection));
  $("scores").querySelector("tbody").replaceChildren(...s.scores.map((r) =>
    el("tr", { class: r.winner ? "winner" : "" }, el("td", { text: r.seat }), el("td", { class: "score", text: String(r.score) }))));
  $("waiting").textContent = s.waiting_for;
  if (hintShown && hintShown.moves !== s.moves) hintShown = null;
  const hint = s.hint ? `Solver's hint: ${s.hint}` : hintShown ? hintShown.text : "";
  $("hint").hidden = !hint;
  $("hint").textContent = hint;
  $("hint-ask").hidden = !s.hints || s.over;
  renderCheck(s.check);
  $("prompts").replaceChildren(...s.prompts.map(renderPrompt));
  $("actions").replaceChildren(...s.groups.map(renderGroup));
  for (const entry of s.log) addLog(entry);
}

function renderViewer(s) {
  const select = $("viewer");
  const wanted = s.hidden_hands ? s.players : 0;
  if (select.options.length !== wanted + 1) {
    select.replaceChildren(el("option", { value: "", text: "the table" }));
    for (let p = 1; p <= wanted; p++) select.append(el("option", { value: String(p), text: `Player ${p}` }));
  }
  select.value = viewer;
  select.parentElement.hidden = !s.hidden_hands;
}

function renderSection(section) {
  const box = el("div", { class: "section" }, el("h4", { text: section.title }));
  if (section.kind === "ring") {
    const ring = el("div", { class: "ring" });
    for (const item of section.items) {
      const classes = ["era"];
      if (item.includes("<- Dr. Foo")) classes.push("foo");
      if (item.includes("VORTEX") || item.includes("vortex")) classes.push("vortex");
      ring.append(el("div", { class: classes.join(" "), text: item }));
    }
    box.append(ring);
  } else {
    for (const item of section.items) box.append(el("div", { class: "line", text: item }));
  }
  return box;
}

function renderCheck(check) {
  $("check").hidden = !check;
  if (!check) return;
  $("check-text").textContent = check.text;
  const buttons = check.candidates.map((c) =>
    el("button", { class: "candidate", onclick: () => post("/api/correct", { actions: c === "nothing" ? [] : c.split(" then "), ...(check.step >= 0 ? { step: check.step } : {}) }), text: c }));
  $("check-candidates").replaceChildren(...buttons);
}

function renderGroup(group) {
  const box = el("div", { class: "group" }, el("span", { class: "verb", text: `${group.seat} · ${group.verb}` }));
  if (group.menu) {
    const select = el("select", { "aria-label": `${group.verb} choices` });
    for (const a of group.actions) select.append(el("option", { value: a, text: a }));
    box.append(select, el("button", { onclick: () => act(select.value), text: "Do" }));
  } else {
    for (const a of group.actions) box.append(el("button", { class: "action", "data-action": a, onclick: () => act(a), text: a }));
  }
  return box;
}

function renderPrompt(p) {
  if (p.kind === "roll") {
    const input = el("input", { type: "number", min: "1", max: String(p.die), id: `roll-${p.player}`, "aria-label": `${p.seat}'s d${p.die}` });
    return el("div", { class: "prompt roll" },
      el("span", { text: `${p.seat} rolls the d${p.die}: ` }), input,
      el("button", { class: "roll-enter", onclick: () => act(`roll ${p.player} ${input.value}`), text: "Enter roll" }),
      el("button", { class: "secondary", onclick: () => act("roll auto"), text: "Roll for me" }));
  }
  if (p.kind === "landing") {
    const inputs = p.eras.map((name, i) => el("input", { type: "number", min: "0", max: String(p.drop), value: "0", id: `landing-${i}`, "aria-label": name }));
    const row = el("div", { class: "prompt landing" }, el("div", { text: `Where did Dr. Foo's ${p.drop} rift cubes land?` }));
    p.eras.forEach((name, i) => row.append(el("label", {}, `${name} `, inputs[i], " ")));
    row.append(el("button", { class: "landing-enter", onclick: () => act("rifts " + inputs.map((x) => x.value || "0").join(" ")), text: "Enter landing" }),
      el("button", { class: "secondary", onclick: () => act("rifts auto"), text: "Simulate the chutes" }));
    return row;
  }
  return el("div");
}

function addLog(entry) {
  const item = el("li", { class: `${entry.kind}${entry.urgent ? " urgent" : ""}`, "data-seq": String(entry.seq), text: entry.text });
  $("log").prepend(item);
  while ($("log").children.length > 300) $("log").lastChild.remove();
  if ($("browser-speech").checked && entry.seq > spokenSeq && ["event", "action", "check", "revised"].includes(entry.kind) && window.speechSynthesis) {
    const u = new SpeechSynthesisUtterance(entry.text);
    u.rate = Number($("rate").value) / 175;
    if (entry.urgent) speechSynthesis.cancel();
    speechSynthesis.speak(u);
  }
  spokenSeq = Math.max(spokenSeq, entry.seq);
}

$("entry-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const text = $("entry").value.trim();
  if (!text) return;
  const ok = lastState && lastState.mode === "camera"
    ? await post("/api/correct", { actions: text.split(";").map((x) => x.trim()).filter(Boolean) })
    : await act(text);
  if (ok) $("entry").value = "";
});
$("undo").addEventListener("click", () => post("/api/undo"));
$("hint-ask").addEventListener("click", async () => {
  const moves = lastState ? lastState.moves : null;
  $("hint-ask").disabled = true;
  $("hint-ask").textContent = "Thinking…";
  const reply = await post("/api/hint", { viewer: viewer ? Number(viewer) : null });
  $("hint-ask").disabled = false;
  $("hint-ask").textContent = "Hint";
  if (!reply) return;
  const text = reply.action ? `Hint for Player ${reply.player}: ${reply.action} (${reply.reason})` : `No hint: ${reply.reason}`;
  hintShown = { moves, text };
  if (lastState) render({ ...lastState, log: [] });
});
$("mute").addEventListener("change", (e) => post("/api/speech", { muted: e.target.checked }));
$("rate").addEventListener("change", (e) => post("/api/speech", { rate: Number(e.target.value) }));
$("viewer").addEventListener("change", (e) => {
  viewer = e.target.value;
  const url = new URL(location.href);
  if (viewer) url.searchParams.set("viewer", viewer); else url.searchParams.delete("viewer");
  history.replaceState(null, "", url);
  if (socket) { socket.onclose = null; socket.close(); }
  connect();
});
// ----- table setup: four corners clicked on the camera's picture, then zones dragged out on the table from above
const tableSetup = { mode: "", status: null, image: null, points: [], zones: [], drag: null };

async function showTableSetup() {
  const reply = await fetch("/api/table");
  if (!reply.ok) return;  // a session without a camera: nothing to set up on
  $("table-setup").hidden = false;
  tableSetup.status = await reply.json();
  $("zone-name").replaceChildren(...tableSetup.status.zone_names.map((n) => el("option", { value: n, text: n })));
  if (tableSetup.status.size_mm) { $("table-w").value = tableSetup.status.size_mm[0]; $("table-h").value = tableSetup.status.size_mm[1]; }
  showFiles();
}

function showFiles() {
  const s = tableSetup.status;
  const files = [s.files.calibration, s.files.layout].filter(Boolean);
  $("table-files").textContent = files.length ? `Kept in ${files.join(" and ")} (tabletop detect --calibration FILE --layout FILE reads them).` : "";
}

async function loadTable(mode) {
  // the clicks of the new mode start now, not when the server has answered (a click meanwhile must not be lost)
  tableSetup.points = [];
  tableSetup.mode = mode || tableSetup.mode;
  $("table-set").disabled = true;
  $("table-canvas").dataset.ready = "";
  const reply = await fetch("/api/table");
  if (!reply.ok) return;
  tableSetup.status = await reply.json();
  showFiles();
  const mat = tableSetup.status.source === "mat";
  tableSetup.mode = mat ? "mat" : mode || (tableSetup.status.calibrated ? "zones" : "points");
  tableSetup.zones = mat ? [] : tableSetup.status.zones.map((z) => ({ name: z.name, box_mm: z.box_mm }));
  const zoning = tableSetup.mode === "zones";
  $("zone-tools").hidden = !zoning;
  $("table-size").hidden = mat;
  $("table-set").disabled = tableSetup.points.length !== 4;
  $("table-step").textContent = mat
    ? `A printed mat places the table by its markers (${tableSetup.status.mat_state || "not seen yet"}); its zones are the mat's.`
    : zoning
      ? "The table from above. Pick a zone, then drag its rectangle out on the picture; Save zones when done."
      : "Click four corners of something of known size lying on the table (a sheet of paper, the board) in order: top left, top right, bottom right, bottom left. Give its size, then Set the table.";
  if (mat && !tableSetup.status.calibrated) return;
  const image = showOnCanvas($("table-canvas"), tableSetup, drawTable);
  image.onerror = () => showError(zoning ? "The table is not set yet." : "No camera picture yet: try again in a moment.");
  image.src = mat ? `/api/table/view.jpg?t=${Date.now()}`
    : zoning ? `/api/table/view.jpg?plain=1&t=${Date.now()}` : `/api/table/camera.jpg?t=${Date.now()}`;
  renderZoneList();
}

// A picture shown on a setup's canvas at its own size once loaded (set the returned image's src), then drawn over;
// the canvas's data-ready names the mode whose picture shows (the browser tests wait for it).
function showOnCanvas(c, setup, draw) {
  const image = new Image();
  image.onload = () => {
    setup.image = image;
    if (c.width !== image.naturalWidth || c.height !== image.naturalHeight) { c.width = image.naturalWidth; c.height = image.naturalHeight; }
    draw();
    c.dataset.ready = setup.mode;
  };
  return image;
}

function canvasPoint(e, c = $("table-canvas")) {
  const box = c.getBoundingClientRect();
  return [(e.clientX - box.left) * c.width / box.width, (e.clientY - box.top) * c.height / box.height];
}

function toView(mm) { const v = tableSetup.status.view; return [(mm[0] - v.x0) / v.mm_per_px, (mm[1] - v.y0) / v.mm_per_px]; }
function toMm(px) { const v = tableSetup.status.view; return [v.x0 + px[0] * v.mm_per_px, v.y0 + px[1] * v.mm_per_px]; }

function drawTable() {
  const c = $("table-canvas"), g = c.getContext("2d");
  if (!tableSetup.image) return;
  g.drawImage(tableSetup.image, 0, 0);
  g.lineWidth = Math.max(2, c.width / 400);
  g.font = `${Math.max(14, c.width / 50)}px sans-serif`;
  if (tableSetup.mode === "points") {
    g.strokeStyle = g.fillStyle = "#f2c14e";
    g.beginPath();
    tableSetup.points.forEach((p, i) => (i ? g.lineTo(...p) : g.moveTo(...p)));
    if (tableSetup.points.length === 4) g.closePath();
    g.stroke();
    tableSetup.points.forEach((p, i) => { g.beginPath(); g.arc(p[0], p[1], g.lineWidth * 3, 0, 7); g.fill(); g.fillText(String(i + 1), p[0] + 8, p[1] - 8); });
    return;
  }
  g.strokeStyle = g.fillStyle = "#00c8ff";
  for (const z of tableSetup.zones) {
    const a = toView(z.box_mm.slice(0, 2)), b = toView(z.box_mm.slice(2));
    g.strokeRect(a[0], a[1], b[0] - a[0], b[1] - a[1]);
    g.fillText(z.name, a[0] + 6, a[1] + 20);
  }
  if (tableSetup.drag && tableSetup.drag.to) {
    const [a, b] = [tableSetup.drag.from, tableSetup.drag.to];
    g.setLineDash([6, 4]); g.strokeRect(a[0], a[1], b[0] - a[0], b[1] - a[1]); g.setLineDash([]);
  }
}

function renderZoneList() {
  $("zone-list").replaceChildren(...tableSetup.zones.map((z, i) => el("li", {},
    `${z.name}: ${z.box_mm.map((v) => Math.round(v)).join(", ")} mm `,
    el("button", { class: "secondary", onclick: () => { tableSetup.zones.splice(i, 1); renderZoneList(); drawTable(); }, text: "remove" }))));
}

$("table-setup").addEventListener("toggle", () => { if ($("table-setup").open) loadTable(); });
$("table-restart").addEventListener("click", () => loadTable("points"));
$("table-canvas").addEventListener("pointerdown", (e) => {
  const p = canvasPoint(e);
  if (tableSetup.mode === "points") {
    if (tableSetup.points.length >= 4) tableSetup.points = [];
    tableSetup.points.push(p);
    $("table-set").disabled = tableSetup.points.length !== 4;
  } else if (tableSetup.mode === "zones") {
    tableSetup.drag = { from: p, to: null };
    $("table-canvas").setPointerCapture(e.pointerId);
  }
  drawTable();
});
$("table-canvas").addEventListener("pointermove", (e) => { if (tableSetup.drag) { tableSetup.drag.to = canvasPoint(e); drawTable(); } });
$("table-canvas").addEventListener("pointerup", (e) => {
  const drag = tableSetup.drag;
  tableSetup.drag = null;
  if (!drag) return;
  const to = canvasPoint(e);
  if (Math.abs(to[0] - drag.from[0]) < 5 || Math.abs(to[1] - drag.from[1]) < 5) { drawTable(); return; }
  const a = toMm([Math.min(drag.from[0], to[0]), Math.min(drag.from[1], to[1])]);
  const b = toMm([Math.max(drag.from[0], to[0]), Math.max(drag.from[1], to[1])]);
  const name = $("zone-name").value;
  tableSetup.zones = tableSetup.zones.filter((z) => z.name !== name);  // a zone drawn again replaces the old one
  tableSetup.zones.push({ name, box_mm: [...a, ...b].map((v) => Math.round(v * 10) / 10) });
  renderZoneList();
  drawTable();
});
$("table-set").addEventListener("click", async () => {
  const points = tableSetup.points.map((p) => p.map((v) => Math.round(v * 10) / 10));
  if (await post("/api/table/points", { points, width_mm: Number($("table-w").value), height_mm: Number($("table-h").value) })) loadTable("zones");
});
$("zones-save").addEventListener("click", async () => {
  if (await post("/api/table/zones", { zones: tableSetup.zones })) loadTable("zones");
});
// ----- The LOOP's board: its four corners clicked on a photo square it up; each Era's region clicked round on that
const boardSetup = { mode: "", status: null, image: null, points: [], current: [], regions: { eras: {}, missions: {} } };

async function showBoardSetup() {
  const reply = await fetch("/api/board");
  if (!reply.ok) return;  // not The LOOP: no board to set up
  $("board-setup").hidden = false;
  boardSetup.status = await reply.json();
  $("board-region").replaceChildren(...boardSetup.status.eras.flatMap((e) => [
    el("option", { value: `eras:${e.code}`, text: e.name }),
    el("option", { value: `missions:${e.code}`, text: `${e.name}: its mission spot` })]));
}

function boardRegionName(key) {
  const [kind, code] = key.split(":");
  const era = boardSetup.status.eras.find((e) => e.code === code);
  return kind === "eras" ? era.name : `${era.name}'s mission spot`;
}

async function loadBoard(mode) {
  boardSetup.points = [];
  boardSetup.current = [];
  $("board-square").disabled = true;
  $("board-canvas").dataset.ready = "";
  const reply = await fetch("/api/board");
  if (!reply.ok) return;
  const s = boardSetup.status = await reply.json();
  boardSetup.regions = { eras: { ...s.regions.eras }, missions: { ...s.regions.missions } };
  boardSetup.mode = mode || (s.squared ? "regions" : "corners");
  const regions = boardSetup.mode === "regions";
  $("board-camera").hidden = !s.camera;
  $("board-photo-tools").hidden = regions;
  $("board-region-tools").hidden = !regions;
  $("board-files").textContent = s.folder ? `Kept in ${s.folder} (tabletop detect --game the-loop --board ${s.folder} reads it).` : "";
  $("board-step").textContent = regions
    ? "The board squared up. Pick a region, click round it on the picture (a mission spot: its four corners), then Close this region. Save the board when all seven Eras are drawn."
    : s.photo ? "Click the board's four corners in order: top left, top right, bottom right, bottom left (a round board: the square it fits in). Then Square the board up."
      : "Take the camera's picture, or choose a photo of the board seen from above.";
  renderBoardList();
  if (!regions && !s.photo) { boardSetup.image = null; drawBoard(); return; }
  showOnCanvas($("board-canvas"), boardSetup, drawBoard).src = `/api/board/${regions ? "picture" : "photo"}.jpg?t=${Date.now()}`;
}

function drawBoard() {
  const c = $("board-canvas"), g = c.getContext("2d");
  g.clearRect(0, 0, c.width, c.height);
  if (!boardSetup.image) return;
  g.drawImage(boardSetup.image, 0, 0);
  g.lineWidth = Math.max(2, c.width / 400);
  g.font = `${Math.max(14, c.width / 50)}px sans-serif`;
  const path = (points, closed) => {
    g.beginPath();
    points.forEach((p, i) => (i ? g.lineTo(...p) : g.moveTo(...p)));
    if (closed) g.closePath();
    g.stroke();
    points.forEach((p) => { g.beginPath(); g.arc(p[0], p[1], g.lineWidth * 2, 0, 7); g.fill(); });
  };
  if (boardSetup.mode === "corners") {
    g.strokeStyle = g.fillStyle = "#f2c14e";
    path(boardSetup.points, boardSetup.points.length === 4);
    return;
  }
  const px = (f) => [f[0] * c.width, f[1] * c.height];
  for (const kind of ["eras", "missions"]) {
    g.strokeStyle = g.fillStyle = kind === "eras" ? "#00c8ff" : "#ff8c00";
    for (const [code, polygon] of Object.entries(boardSetup.regions[kind])) {
      const points = polygon.map(px);
      path(points, true);
      const mid = points.reduce((a, p) => [a[0] + p[0] / points.length, a[1] + p[1] / points.length], [0, 0]);
      g.fillText(code, mid[0] - 12, mid[1] + 6);
    }
  }
  g.strokeStyle = g.fillStyle = "#f2c14e";
  path(boardSetup.current.map(px), false);
}

function renderBoardList() {
  const items = [];
  for (const kind of ["eras", "missions"]) {
    for (const code of Object.keys(boardSetup.regions[kind])) {
      items.push(el("li", {}, `${boardRegionName(`${kind}:${code}`)} `, el("button", { class: "secondary", text: "remove",
        onclick: () => { delete boardSetup.regions[kind][code]; renderBoardList(); drawBoard(); } })));
    }
  }
  $("board-list").replaceChildren(...items);
}

$("board-setup").addEventListener("toggle", () => { if ($("board-setup").open) loadBoard(); });
$("board-again").addEventListener("click", () => loadBoard("corners"));
$("board-camera").addEventListener("click", async () => { if (await post("/api/board/camera")) loadBoard("corners"); });
$("board-file").addEventListener("change", async () => {
  const file = $("board-file").files[0];
  if (!file) return;
  const reply = await fetch("/api/board/photo", { method: "POST", body: file });
  const data = await reply.json().catch(() => ({ error: `the server answered ${reply.status}` }));
  if (!reply.ok || data.ok === false) { showError(data.error || `refused (${reply.status})`); return; }
  showError("");
  loadBoard("corners");
});
$("board-canvas").addEventListener("pointerdown", (e) => {
  const c = $("board-canvas");
  const p = canvasPoint(e, c);
  if (boardSetup.mode === "corners") {
    if (boardSetup.points.length >= 4) boardSetup.points = [];
    boardSetup.points.push(p);
    $("board-square").disabled = boardSetup.points.length !== 4;
  } else if (boardSetup.mode === "regions") {
    boardSetup.current.push([p[0] / c.width, p[1] / c.height]);
  }
  drawBoard();
});
$("board-square").addEventListener("click", async () => {
  const points = boardSetup.points.map((p) => p.map((v) => Math.round(v * 10) / 10));
  if (await post("/api/board/corners", { points })) loadBoard("regions");
});
$("board-undo").addEventListener("click", () => { boardSetup.current.pop(); drawBoard(); });
$("board-close").addEventListener("click", () => {
  const key = $("board-region").value, [kind, code] = key.split(":");
  const need = kind === "missions" ? "exactly 4 corners" : "at least 3 points";
  const n = boardSetup.current.length;
  if (kind === "missions" ? n !== 4 : n < 3) { showError(`${boardRegionName(key)}: click ${need} round it (${n} so far)`); return; }
  showError("");
  boardSetup.regions[kind][code] = boardSetup.current.map((p) => p.map((v) => Math.round(v * 1e5) / 1e5));
  boardSetup.current = [];
  const options = [...$("board-region").options];
  const next = options.find((o) => { const [k, c] = o.value.split(":"); return k === "eras" && !boardSetup.regions.eras[c]; });
  if (next) $("board-region").value = next.value;
  renderBoardList();
  drawBoard();
});
$("board-save").addEventListener("click", async () => {
  if (await post("/api/board/regions", boardSetup.regions)) loadBoard("regions");
});
connect();
showBoardSetup();
