// The sample viewer of report.html: filter, sort, search and page the samples; open one to compare outputs.
// Data comes from the <script type="application/json" id="viewer-data"> element (report/viewer.py).
// Every untrusted string reaches the page through textContent or a fixed attribute, never as markup.
(function () {
  "use strict";
  var PAGE = 100;
  var holder = document.getElementById("viewer-data");
  var root = document.getElementById("viewer");
  if (!holder || !root) return;
  var D = JSON.parse(holder.textContent);
  var S = D.strings, cols = D.columns, samples = D.samples, results = D.results, cats = D.categories;
  var runs = {};
  cols.forEach(function (c) { runs[c.run] = true; });
  var manyRuns = Object.keys(runs).length > 1;
  var state = { col: 0, topic: "", cat: "", validity: "", field: "", q: "", sort: "eqs-asc", page: 0, open: -1 };
  var view = [];
  var haystacks = {};

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) if (arguments[i]) parent.appendChild(arguments[i]);
    return parent;
  }
  function option(value, label) {
    var o = el("option", null, label);
    o.value = value;
    return o;
  }
  function colName(k) { return manyRuns ? cols[k].run + " / " + cols[k].model : cols[k].model; }
  function num(x) { return x === null || x === undefined ? "—" : x.toFixed(3); }
  function signed(x) { return x === null ? "—" : (x > 0 ? "+" : "") + x.toFixed(3); }
  function pretty(text) {  // compact JSON indented for reading; clipped text stays as it is
    if (text === null || text === undefined) return text;
    try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return text; }
  }
  function result(k, i) { return results[k][i]; }
  function eqs(k, i) { var r = results[k][i]; return r ? r[0] : null; }
  function delta(k, i) {
    var a = eqs(k, i), b = eqs(0, i);
    return a === null || b === null ? null : a - b;
  }

  // --- controls ---
  function control(label, input) {
    var wrap = el("label", "control", label + " ");
    wrap.appendChild(input);
    return wrap;
  }
  function select(name, options) {
    var s = el("select");
    s.name = name;
    s.id = "viewer-" + name;
    options.forEach(function (o) { s.appendChild(option(o[0], o[1])); });
    s.addEventListener("change", function () {
      state[name] = name === "col" ? Number(s.value) : s.value;
      state.page = 0;
      refresh();
    });
    return s;
  }
  var topics = {}, failing = {};
  samples.forEach(function (s) { if (s[1]) topics[s[1]] = true; });
  results.forEach(function (column) {
    column.forEach(function (r) {
      if (!r) return;
      for (var j = 0; j < r[5].length; j += 4) if (r[5][j + 1] !== 0) failing[r[5][j]] = true;
    });
  });
  var colOptions = cols.map(function (c, k) { return [String(k), colName(k)]; });
  var sortOptions = [["eqs-asc", "EQS, lowest first"], ["eqs-desc", "EQS, highest first"], ["id", "sample id"]];
  for (var k = 1; k < cols.length; k++) {
    sortOptions.push(["delta-" + k + "-asc", "Δ EQS " + colName(k) + " − " + colName(0) + ", largest drop first"]);
    sortOptions.push(["delta-" + k + "-desc", "Δ EQS " + colName(k) + " − " + colName(0) + ", largest gain first"]);
  }
  var search = el("input");
  search.type = "search";
  search.id = "viewer-q";
  search.placeholder = "sample id, topic, title or output";
  search.addEventListener("input", function () { state.q = search.value.toLowerCase(); state.page = 0; refresh(); });
  var controls = add(el("div", "controls"),
    control("Model", select("col", colOptions)),
    control("Topic", select("topic", [["", "all"]].concat(Object.keys(topics).sort().map(function (t) { return [t, t]; })))),
    control("Output", select("validity", [["", "all"], ["valid", "valid"], ["invalid", "invalid"]])),
    control("Has a field", select("cat", [["", "any"]].concat(cats.slice(1).map(function (c, i) { return [String(i + 1), c]; })))),
    control("Failed field", select("field", [["", "any"]].concat(Object.keys(failing).map(Number)
      .sort(function (a, b) { return S[a] < S[b] ? -1 : S[a] > S[b] ? 1 : 0; })
      .map(function (p) { return [String(p), S[p]]; })))),
    control("Sort", select("sort", sortOptions)),
    control("Search", search));
  var status = el("p", "muted");
  status.id = "viewer-status";
  var prev = el("button", null, "← previous"), next = el("button", null, "next →");
  prev.type = next.type = "button";
  prev.id = "viewer-prev";
  next.id = "viewer-next";
  prev.addEventListener("click", function () { state.page -= 1; render(); });
  next.addEventListener("click", function () { state.page += 1; render(); });
  var table = el("table", "data viewer-table");
  table.id = "viewer-table";
  var headRow = el("tr");
  ["sample", "topic", "complexity"].forEach(function (h) { headRow.appendChild(el("th", null, h)); });
  cols.forEach(function (c, k) {
    headRow.appendChild(el("th", null, "EQS " + colName(k)));
    headRow.appendChild(el("th", null, "valid"));
  });
  for (k = 1; k < cols.length; k++) headRow.appendChild(el("th", null, "Δ " + colName(k)));
  add(table, add(el("thead"), headRow));
  var body = el("tbody");
  table.appendChild(body);
  var detail = el("div", "viewer-detail");
  detail.id = "viewer-detail";
  add(root, controls, add(el("div", "pager"), prev, next, status), table, detail);
  body.addEventListener("click", function (event) {
    var row = event.target.closest ? event.target.closest("tr") : null;
    if (!row || row.dataset.i === undefined) return;
    state.open = Number(row.dataset.i);
    showDetail();
  });

  // --- filter, sort, page ---
  function haystack(i) {
    var key = state.col + ":" + i, found = haystacks[key];
    if (found === undefined) {
      var r = result(state.col, i), s = samples[i];
      found = haystacks[key] = (s[0] + "\n" + s[1] + "\n" + s[3] + "\n" + (r && r[3] ? r[3] : "")).toLowerCase();
    }
    return found;
  }
  function hasField(r, test) {
    for (var j = 0; j < r[5].length; j += 4) if (test(r[5], j)) return true;
    return false;
  }
  function keep(i) {
    var r = result(state.col, i), s = samples[i];
    if (state.topic && s[1] !== state.topic) return false;
    if (state.validity && (!r || (r[1] === 1) !== (state.validity === "valid"))) return false;
    if (state.cat) {
      var cat = Number(state.cat);
      if (!r || !hasField(r, function (f, j) { return f[j + 1] === cat; })) return false;
    }
    if (state.field) {
      var path = Number(state.field);
      if (!r || !hasField(r, function (f, j) { return f[j] === path && f[j + 1] !== 0; })) return false;
    }
    if (state.q && haystack(i).indexOf(state.q) < 0) return false;
    return true;
  }
  function order() {
    var parts = state.sort.split("-"), key, desc = parts[parts.length - 1] === "desc";
    if (parts[0] === "id") {
      view.sort(function (a, b) { return samples[a][0] < samples[b][0] ? -1 : samples[a][0] > samples[b][0] ? 1 : 0; });
      return;
    }
    if (parts[0] === "delta") {
      var k = Number(parts[1]);
      key = function (i) { return delta(k, i); };
    } else {
      key = function (i) { return eqs(state.col, i); };
    }
    var keys = {};
    view.forEach(function (i) { keys[i] = key(i); });
    view.sort(function (a, b) {
      var x = keys[a], y = keys[b];
      if (x === null || y === null) return x === y ? a - b : x === null ? 1 : -1;  // unscored last
      return x === y ? a - b : desc ? y - x : x - y;
    });
  }
  function refresh() {
    view = [];
    for (var i = 0; i < samples.length; i++) if (keep(i)) view.push(i);
    order();
    render();
  }
  function validCell(r) {
    if (!r) return el("td", "muted", "—");
    return r[1] ? el("td", "ok", "yes") : el("td", "bad", "no");
  }
  function render() {
    var pages = Math.max(1, Math.ceil(view.length / PAGE));
    state.page = Math.min(Math.max(state.page, 0), pages - 1);
    var start = state.page * PAGE, rows = view.slice(start, start + PAGE);
    var fragment = document.createDocumentFragment();
    rows.forEach(function (i) {
      var s = samples[i], tr = el("tr");
      tr.dataset.i = String(i);
      if (i === state.open) tr.className = "open";
      var id = el("td");
      add(id, el("button", "link", s[0]));
      add(tr, id, el("td", null, s[1] || "—"), el("td", null, s[2] || "—"));
      cols.forEach(function (c, k) { add(tr, el("td", "num", num(eqs(k, i))), validCell(result(k, i))); });
      for (var k = 1; k < cols.length; k++) {
        var d = delta(k, i);
        add(tr, el("td", "num " + (d === null || d === 0 ? "" : d > 0 ? "up" : "down"), signed(d)));
      }
      fragment.appendChild(tr);
    });
    body.textContent = "";
    body.appendChild(fragment);
    status.textContent = view.length
      ? "samples " + (start + 1) + "–" + (start + rows.length) + " of " + view.length
        + (view.length < samples.length ? " (filtered from " + samples.length + ")" : "")
        + ", page " + (state.page + 1) + " of " + pages
      : "no sample matches (of " + samples.length + ")";
    prev.disabled = state.page === 0;
    next.disabled = state.page >= pages - 1;
  }

  // --- one sample ---
  function block(title, text, missing) {
    var box = el("div", "block");
    add(box, el("h4", null, title));
    box.appendChild(text === null || text === undefined ? el("p", "muted", missing) : el("pre", null, text));
    return box;
  }
  function showDetail() {
    var i = state.open, s = samples[i], d = D.details[i];
    Array.prototype.forEach.call(body.querySelectorAll("tr.open"), function (tr) { tr.className = ""; });
    var current = body.querySelector('tr[data-i="' + i + '"]');
    if (current) current.className = "open";
    detail.textContent = "";
    var close = el("button", null, "close");
    close.type = "button";
    close.addEventListener("click", function () { detail.textContent = ""; state.open = -1; render(); });
    var head = el("h3", null, "Sample ");
    head.appendChild(el("code", null, s[0]));
    add(detail, close, head,
      el("p", "muted", [s[1] && "topic " + s[1], s[2] && "complexity " + s[2], s[3]].filter(Boolean).join(" · ")));
    var missing = "not available: the dataset file named by the run cannot be read here";
    add(detail, add(el("div", "cards"),
      block("Source text", d[0], missing),
      block("Gold", pretty(d[2]), missing)));
    var schema = el("details");
    add(schema, el("summary", null, "Schema"),
      d[1] < 0 ? el("p", "muted", missing) : el("pre", null, pretty(S[d[1]])));
    detail.appendChild(schema);
    var outputs = el("div", "cards outputs");
    cols.forEach(function (c, k) {
      var r = result(k, i), card = el("div", "card output");
      card.appendChild(el("h4", null, colName(k)));
      if (!r) {
        card.appendChild(el("p", "muted", "not in this run"));
      } else {
        add(card, el("p", r[1] ? "ok" : "bad", "EQS " + num(r[0]) + " · " + (r[1] ? "valid" : "invalid")
          + (r[2] && r[2] !== "invalid" ? " (" + r[2] + ")" : "")));
        r[4].forEach(function (p) { card.appendChild(el("p", "bad", p)); });
        card.appendChild(r[3] === null ? el("p", "muted", "no output") : el("pre", null, r[3]));
      }
      outputs.appendChild(card);
    });
    add(detail, el("h4", null, "Outputs"), outputs, el("h4", null, "Field-level diff"), diffTable(i));
    detail.scrollIntoView();
  }
  function diffTable(i) {
    var gold = {}, g = D.details[i][3], paths = {}, byCol = [];
    for (var j = 0; j < g.length; j += 2) { gold[g[j]] = g[j + 1]; paths[g[j]] = 0; }
    cols.forEach(function (c, k) {
      var r = result(k, i), fields = {};
      if (r) for (var j = 0; j < r[5].length; j += 4) {
        var f = r[5];
        fields[f[j]] = [f[j + 1], f[j + 2], f[j + 3]];
        if (f[j + 1] !== 0) paths[f[j]] = 1;
        else if (!(f[j] in paths)) paths[f[j]] = 0;
      }
      byCol.push(fields);
    });
    var ordered = Object.keys(paths).map(Number).sort(function (a, b) {
      return paths[b] - paths[a] || (S[a] < S[b] ? -1 : S[a] > S[b] ? 1 : 0);
    });
    var t = el("table", "data diff viewer-diff"), head = el("tr");
    add(head, el("th", null, "field"), el("th", null, "gold"));
    cols.forEach(function (c, k) { head.appendChild(el("th", null, colName(k))); });
    add(t, add(el("thead"), head));
    var tb = el("tbody");
    ordered.forEach(function (p) {
      var tr = el("tr");
      var name = el("td");
      name.appendChild(el("code", null, S[p]));
      add(tr, name, el("td", "val", p in gold ? S[gold[p]] : "—"));
      byCol.forEach(function (fields) {
        var f = fields[p];
        if (!f) { tr.appendChild(el("td", "val muted", "—")); return; }
        var category = f[0] >= 0 ? cats[f[0]] : "other";
        var cell = el("td", "val cat-" + category, f[2] < 0 ? (p in gold ? S[gold[p]] : "") : S[f[2]]);
        cell.dataset.category = category;
        add(cell, el("span", "tag", category + (category === "exact" ? "" : " " + f[1].toFixed(2))));
        tr.appendChild(cell);
      });
      tb.appendChild(tr);
    });
    if (!ordered.length) tb.appendChild(add(el("tr"), el("td", "muted", "no field")));
    t.appendChild(tb);
    return t;
  }

  (D.notes || []).forEach(function (n) { root.insertBefore(el("p", "note", n), controls); });
  refresh();
})();
