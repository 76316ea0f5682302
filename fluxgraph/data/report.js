// fluxgraph HTML report: pan, zoom and search over the graph (an inline Graphviz SVG), a
// Kustomization's objects, inputs and findings on click, the findings table filtered by rule and
// severity. Every value from the repository reaches the page through textContent, never as HTML.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("fluxgraph-data").textContent);
  const graph = document.getElementById("graph");
  const svg = graph.querySelector("svg");
  const panel = document.getElementById("panel");

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else e.setAttribute(k, v);
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  // --- the model: Kustomizations and HelmReleases by key, findings by node key
  const ks = {}, hr = {};
  for (const c of data.graph.clusters || []) {
    const name = c.cluster.name;
    for (const k of c.kustomizations || []) ks[name + "|" + k.id] = k;
    for (const h of c.helmReleases || []) hr[name + "|" + h.id] = h;
  }
  function findingsOf(node) {
    const [kind, id] = [node.key.slice(0, node.key.indexOf(":")), node.key.slice(node.key.indexOf(":") + 1)];
    return data.findings.filter((f) => {
      if (f.cluster && node.cluster && !f.cluster.split(", ").includes(node.cluster)) return false;
      if (kind === "ks") return f.kustomization === id || (f.kustomizations || []).includes(id);
      if (kind === "hr") return f.object === "HelmRelease/" + id;
      return false;
    });
  }

  // --- pan and zoom: the SVG's viewBox
  let view = null, full = null;
  function setView(v) { view = v; svg.setAttribute("viewBox", `${v.x} ${v.y} ${v.w} ${v.h}`); }
  if (svg) {
    const vb = svg.viewBox.baseVal;
    full = { x: vb.x, y: vb.y, w: vb.width, h: vb.height };
    svg.removeAttribute("width"); svg.removeAttribute("height");
    setView(Object.assign({}, full));
    graph.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      const r = svg.getBoundingClientRect();
      const f = ev.deltaY < 0 ? 0.85 : 1 / 0.85;
      zoomAt((ev.clientX - r.left) / r.width, (ev.clientY - r.top) / r.height, f);
    }, { passive: false });
    let drag = null;
    graph.addEventListener("mousedown", (ev) => {
      if (ev.target.closest("#tools")) return;
      drag = { x: ev.clientX, y: ev.clientY, v: Object.assign({}, view), moved: false };
      graph.classList.add("dragging");
    });
    window.addEventListener("mousemove", (ev) => {
      if (!drag) return;
      const r = svg.getBoundingClientRect();
      const s = Math.max(drag.v.w / r.width, drag.v.h / r.height);
      if (Math.abs(ev.clientX - drag.x) + Math.abs(ev.clientY - drag.y) > 3) drag.moved = true;
      setView({ x: drag.v.x - (ev.clientX - drag.x) * s, y: drag.v.y - (ev.clientY - drag.y) * s, w: drag.v.w, h: drag.v.h });
    });
    window.addEventListener("mouseup", () => { graph.classList.remove("dragging"); setTimeout(() => { drag = null; }, 0); });
    svg.addEventListener("click", (ev) => {
      if (drag && drag.moved) return;
      const g = ev.target.closest("g.node");
      if (g) select(g.dataset.key ? g : null);
    });
  }
  function zoomAt(px, py, f) {
    const w = view.w * f, h = view.h * f;
    setView({ x: view.x + (view.w - w) * px, y: view.y + (view.h - h) * py, w, h });
  }
  function centerOn(g) {
    const b = g.getBBox();
    const w = Math.max(b.width * 4, Math.min(full.w, 800)), h = w * (view.h / view.w);
    setView({ x: b.x + b.width / 2 - w / 2, y: b.y + b.height / 2 - h / 2, w, h });
  }

  // --- nodes: Graphviz writes the DOT node name as each g.node's <title>
  const nodes = [];
  if (svg) {
    for (const g of svg.querySelectorAll("g.node")) {
      const t = g.querySelector("title");
      const info = t && data.nodes[t.textContent];
      if (!info) continue;
      g.dataset.key = info.key;
      g.dataset.id = t.textContent;
      nodes.push({ g, info, text: (info.key + " " + info.title + " " + (info.details || []).join(" ")).toLowerCase() });
    }
  }
  document.getElementById("fit").addEventListener("click", () => full && setView(Object.assign({}, full)));
  document.getElementById("zin").addEventListener("click", () => view && zoomAt(0.5, 0.5, 0.7));
  document.getElementById("zout").addEventListener("click", () => view && zoomAt(0.5, 0.5, 1 / 0.7));
  const search = document.getElementById("search"), hits = document.getElementById("hits");
  function runSearch() {
    const q = search.value.trim().toLowerCase();
    let n = 0, first = null;
    for (const x of nodes) {
      const hit = q !== "" && x.text.includes(q);
      x.g.classList.toggle("hit", hit);
      x.g.classList.toggle("dim", q !== "" && !hit);
      if (hit) { n++; first = first || x.g; }
    }
    hits.textContent = q ? `${n} match${n === 1 ? "" : "es"}` : "";
    return first;
  }
  search.addEventListener("input", runSearch);
  search.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") { const g = runSearch(); if (g) { centerOn(g); select(g); } }
  });

  // --- the side panel
  function dl(pairs) {
    const d = el("dl");
    for (const [k, v] of pairs) {
      if (v === null || v === undefined || v === "" || (Array.isArray(v) && !v.length)) continue;
      d.append(el("dt", {}, k), el("dd", {}, Array.isArray(v) ? v.join(", ") : String(v)));
    }
    return d;
  }
  function findingCard(f) {
    const card = el("div", { class: "finding-card " + f.severity },
      el("div", {}, el("span", { class: "sev " + f.severity }, f.severity), " ", el("code", {}, f.rule)),
      el("div", {}, f.headline),
      el("div", { class: "loc" }, `${f.file}:${f.line}:${f.column}`));
    for (const n of f.notes || []) {
      const line = el("div", {}, el("span", { class: "note-label" }, n.label + ": "), n.text || "");
      if (n.items && n.items.length) {
        const ul = el("ul");
        for (const i of n.items) ul.append(el("li", {}, i));
        line.append(ul);
      }
      card.append(line);
    }
    return card;
  }
  function select(g) {
    for (const x of svg ? svg.querySelectorAll("g.node.selected") : []) x.classList.remove("selected");
    panel.replaceChildren();
    if (!g) { panel.append(el("p", { class: "hint" }, "Click a node to see its objects, inputs and findings.")); return; }
    g.classList.add("selected");
    const info = data.nodes[g.dataset.id];
    const id = info.key.slice(info.key.indexOf(":") + 1);
    panel.append(el("h2", {}, info.title));
    if (info.key.startsWith("ks:")) {
      const k = ks[info.cluster + "|" + id];
      if (k) {
        const sf = k.postBuild ? (k.postBuild.substituteFrom || []).map((s) => `${s.kind}/${s.name}${s.optional ? " (optional)" : ""}`) : [];
        panel.append(el("h3", {}, "Inputs"), dl([
          ["cluster", info.cluster], ["declared at", k.file ? `${k.file}:${k.line}` : ""], ["path", k.path],
          ["source", k.source], ["applied by", k.parent], ["dependsOn", k.dependsOn],
          ["substituteFrom", sf], ["substitute", k.postBuild && k.postBuild.substitute ? Object.keys(k.postBuild.substitute) : []],
          ["prune", String(k.prune)], ["wait", String(k.wait)], ["interval", k.interval], ["timeout", k.timeout],
          ["targetNamespace", k.targetNamespace], ["status", k.status],
        ]));
        const inv = k.inventory || [];
        panel.append(el("h3", {}, `Objects (${inv.length})`));
        const ul = el("ul");
        for (const o of inv.slice(0, 300)) {
          ul.append(el("li", {}, `${o.kind}/${o.namespace ? o.namespace + "/" : ""}${o.name} `, el("span", { class: "loc" }, `${o.file}:${o.line}`)));
        }
        if (inv.length > 300) ul.append(el("li", { class: "hint" }, `and ${inv.length - 300} more`));
        panel.append(ul);
      }
    } else if (info.key.startsWith("hr:")) {
      const h = hr[info.cluster + "|" + id];
      if (h) panel.append(el("h3", {}, "Inputs"), dl(Object.entries(h).filter(([k, v]) => typeof v !== "object" || Array.isArray(v))));
    } else {
      panel.append(dl((info.details || []).map((d, i) => [i ? "" : "details", d])));
    }
    const fs = findingsOf(info);
    panel.append(el("h3", {}, `Findings (${fs.length})`));
    if (!fs.length) panel.append(el("p", { class: "hint" }, "none"));
    for (const f of fs) panel.append(findingCard(f));
  }
  select(null);

  // --- the findings table
  const rows = document.getElementById("rows");
  const ruleSel = document.getElementById("rule"), sevSel = document.getElementById("severity"), textIn = document.getElementById("ftext");
  for (const r of [...new Set(data.findings.map((f) => f.rule))].sort()) ruleSel.append(el("option", { value: r }, r));
  const nodeByKs = {};
  for (const x of nodes) nodeByKs[x.info.cluster + "|" + x.info.key] = x.g;
  function drawRows() {
    rows.replaceChildren();
    const rule = ruleSel.value, sev = sevSel.value, q = textIn.value.trim().toLowerCase();
    let shown = 0;
    for (const f of data.findings) {
      if ((rule && f.rule !== rule) || (sev && f.severity !== sev)) continue;
      if (q && !(f.headline + " " + f.file + " " + (f.kustomization || "")).toLowerCase().includes(q)) continue;
      shown++;
      const tr = el("tr", { class: "finding", "data-rule": f.rule, "data-severity": f.severity },
        el("td", {}, el("span", { class: "sev " + f.severity }, f.severity)),
        el("td", {}, el("code", {}, f.rule)),
        el("td", { class: "loc" }, `${f.file}:${f.line}`),
        el("td", {}, f.headline),
        el("td", {}, f.kustomization || (f.kustomizations || []).join(", ")));
      tr.addEventListener("click", () => {
        const next = tr.nextSibling;
        if (next && next.classList && next.classList.contains("notes")) { next.remove(); return; }
        const td = el("td", { colspan: "5" }, findingCard(f));
        tr.after(el("tr", { class: "notes" }, td));
        const key = f.kustomization ? "ks:" + f.kustomization : null;
        const g = key && (nodeByKs[(f.cluster || "").split(", ")[0] + "|" + key]);
        if (g) { centerOn(g); select(g); }
      });
      rows.append(tr);
    }
    document.getElementById("count").textContent = `${shown} of ${data.findings.length} findings`;
  }
  for (const c of [ruleSel, sevSel]) c.addEventListener("change", drawRows);
  textIn.addEventListener("input", drawRows);
  drawRows();
  document.body.dataset.ready = "1";
})();
