// The sample viewer of report.html and `extractbench view`: filter, sort (click a column's header), search and
// page the samples; open one beside the table (j/k or the arrow keys move to the next/previous) to read its
// outputs pretty-printed, diffed against the gold and against the other run, and its fields side by side. With
// repeats, each repeated run gets a "runs passed" column and a table gives pass@k / pass^k against the other run.
// Data comes from two <script type="application/json"> elements (report/viewer.py), as JSON or gzip in base64
// that the browser's DecompressionStream unpacks (nothing is fetched): "viewer-data", the little the table's first
// rows need, then "viewer-body" (texts, outputs, fields), unpacked once those rows are shown.
// Every untrusted string reaches the page through textContent or a fixed attribute, never as markup.
(function () {
  "use strict";
  var PAGE = 100;
  var MAX_DIFF_CELLS = 4000000;  // lines x lines of the two texts a line diff compares at most
  var holder = document.getElementById("viewer-data");
  var root = document.getElementById("viewer");
  if (!holder || !root) return;

  function unpack(element) {
    var text = element.textContent;
    if (element.getAttribute("data-encoding") !== "gzip-base64") return Promise.resolve(JSON.parse(text));
    var bytes;
    if (Uint8Array.fromBase64) {
      bytes = Uint8Array.fromBase64(text.trim());
    } else {
      var binary = atob(text.trim());
      bytes = new Uint8Array(binary.length);
      for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }
  function failed(error) {
    root.appendChild(document.createTextNode("The sample data could not be read: " + error));
  }
  function parsedPage() {  // the body element comes after this script: read it once the page is parsed
    return new Promise(function (resolve) {
      if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", resolve);
      else resolve();
    });
  }
  function afterPaint() {  // unpack the body once the first rows are on screen, not before they are painted
    return new Promise(function (resolve) {
      requestAnimationFrame(function () { setTimeout(resolve, 0); });
    });
  }
  unpack(holder).then(start, failed);

  function start(D) {
  var S = [], cols = D.columns, samples = D.samples, scores = D.scores, cats = D.categories;
  var results = null, details = null;  // from the body, once unpacked
  var bucketNames = D.bucket_names || [], buckets = D.buckets || [];
  var passes = D.passes || [], repeats = D.repeats || [];  // runs passed per sample; pass@k deltas between runs
  var runs = [];
  cols.forEach(function (c) { if (runs.indexOf(c.run) < 0) runs.push(c.run); });
  var manyRuns = runs.length > 1;
  var samePairs = [];  // [a, b]: a column of the current run and the same model in another run
  cols.forEach(function (a, i) {
    if (a.run !== runs[0]) return;
    cols.forEach(function (b, j) { if (b.run !== runs[0] && b.model === a.model) samePairs.push([i, j]); });
  });
  var hasBuckets = buckets.some(function (b) { return b; });
  var state = { col: 0, topic: "", cat: "", validity: "", field: "", bucket: "", q: "",
                ref: samePairs.length ? "same" : "0", sort: "eqs-0", desc: false, page: 0, open: -1 };
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
  function byText(a, b) { return a < b ? -1 : a > b ? 1 : 0; }
  function colName(k) { return manyRuns ? cols[k].run + " / " + cols[k].model : cols[k].model; }
  function num(x) { return x === null || x === undefined ? "—" : x.toFixed(3); }
  function signed(x) { return x === null ? "—" : (x > 0 ? "+" : "") + x.toFixed(3); }
  function sortedKeys(value) {  // objects with their keys in order, so two documents diff by content
    if (Array.isArray(value)) return value.map(sortedKeys);
    if (value === null || typeof value !== "object") return value;
    var out = {};
    Object.keys(value).sort().forEach(function (k) { out[k] = sortedKeys(value[k]); });
    return out;
  }
  function parsed(text) {
    if (text === null || text === undefined) return undefined;
    try { return JSON.parse(text); } catch (e) { return undefined; }
  }
  function pretty(text) {  // compact JSON indented for reading; clipped or broken text stays as it is
    var value = parsed(text);
    return value === undefined ? text : JSON.stringify(value, null, 2);
  }
  function canonical(text) {
    var value = parsed(text);
    return value === undefined ? null : JSON.stringify(sortedKeys(value), null, 2);
  }
  function result(k, i) { return results ? results[k][i] : undefined; }
  function eqs(k, i) { return scores[k][0][i]; }
  function valid(k, i) { return scores[k][1][i]; }
  function bucketOf(k, i) {
    var b = buckets[k];
    return b && b.rows[i] >= 0 ? b.rows[i] : null;
  }
  function bucketColumn() {  // the column the bucket filter reads: the chosen model's, else the first with buckets
    if (buckets[state.col]) return state.col;
    for (var k = 0; k < buckets.length; k++) if (buckets[k]) return k;
    return -1;
  }
  function pairs() {  // the delta columns: [a, b] shows EQS of a minus EQS of b
    if (state.ref === "same") return samePairs;
    var r = Number(state.ref), out = [];
    cols.forEach(function (c, k) { if (k !== r) out.push([k, r]); });
    return out;
  }
  function partner(k) {  // the column a sample's output is diffed against beside the gold
    var found = null;
    pairs().forEach(function (p) {
      if (found === null && p[0] === k) found = p[1];
      else if (found === null && p[1] === k) found = p[0];
    });
    return found;
  }
  function delta(p, i) {
    var a = eqs(p[0], i), b = eqs(p[1], i);
    return a === null || b === null ? null : a - b;
  }
  function deltaName(p) {
    if (state.ref === "same") return "Δ " + cols[p[0]].model + " (" + cols[p[0]].run + " − " + cols[p[1]].run + ")";
    return "Δ " + colName(p[0]) + " − " + colName(p[1]);
  }

  // --- the table's columns: every one sorts when its header is clicked ---
  function tableColumns() {
    var out = [
      { key: "id", label: "sample", text: true, value: function (i) { return samples[i][0]; } },
      { key: "topic", label: "topic", text: true, value: function (i) { return samples[i][1] || null; } },
      { key: "bin", label: "complexity", text: true, value: function (i) { return samples[i][2] || null; } }
    ];
    cols.forEach(function (c, k) {
      out.push({ key: "eqs-" + k, label: "EQS " + colName(k), value: function (i) { return eqs(k, i); } });
      out.push({ key: "valid-" + k, label: "valid " + colName(k),
                 value: function (i) { return valid(k, i); } });
      if (buckets[k]) {
        out.push({ key: "bucket-" + k, label: "bucket " + colName(k) + " (vs " + buckets[k].against + ")",
                   value: function (i) { return bucketOf(k, i); } });
      }
      if (passes[k]) {  // sorts by the share of runs that passed
        out.push({ key: "passes-" + k, label: "runs passed " + colName(k),
                   value: function (i) { var c = passes[k][i]; return c ? c[1] / c[0] : null; } });
      }
    });
    pairs().forEach(function (p) {
      out.push({ key: "delta-" + p[0] + "-" + p[1], label: deltaName(p), value: function (i) { return delta(p, i); } });
    });
    return out;
  }
  var columnsShown = [];

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
    s.value = String(state[name]);
    s.addEventListener("change", function () {
      state[name] = name === "col" ? Number(s.value) : s.value;
      state.page = 0;
      if (name === "ref") buildHead();
      refresh();
    });
    return s;
  }
  var topics = {};
  samples.forEach(function (s) { if (s[1]) topics[s[1]] = true; });
  var colOptions = cols.map(function (c, k) { return [String(k), colName(k)]; });
  var refOptions = (samePairs.length ? [["same", "the same model in the other run"]] : []).concat(colOptions);
  var search = el("input");
  search.type = "search";
  search.id = "viewer-q";
  search.placeholder = "sample id, topic, title or output";
  search.addEventListener("input", function () { state.q = search.value.toLowerCase(); state.page = 0; refresh(); });
  var catSelect = select("cat", [["", "any"]].concat(cats.slice(1).map(function (c, i) { return [String(i + 1), c]; })));
  var fieldSelect = select("field", [["", "any"]]);
  search.disabled = catSelect.disabled = fieldSelect.disabled = true;  // until the body is unpacked
  var controls = add(el("div", "controls"),
    control("Model", select("col", colOptions)),
    cols.length > 1 ? control("Δ against", select("ref", refOptions)) : null,
    hasBuckets ? control("Bucket", select("bucket", [["", "all"]].concat(bucketNames.map(function (b, i) {
      return [String(i), b.replace(/_/g, " ")];
    })))) : null,
    control("Topic", select("topic", [["", "all"]].concat(Object.keys(topics).sort().map(function (t) { return [t, t]; })))),
    control("Output", select("validity", [["", "all"], ["valid", "valid"], ["invalid", "invalid"]])),
    control("Has a field", catSelect),
    control("Failed field", fieldSelect),
    control("Search", search));
  var status = el("p", "muted");
  status.id = "viewer-status";
  var prev = el("button", null, "← previous"), next = el("button", null, "next →");
  prev.type = next.type = "button";
  prev.id = "viewer-prev";
  next.id = "viewer-next";
  prev.addEventListener("click", function () { state.page -= 1; render(); });
  next.addEventListener("click", function () { state.page += 1; render(); });
  var keys = el("p", "muted", "Click a header to sort by it (again to reverse); open a sample, then j / ↓ for the next, "
    + "k / ↑ for the previous, Esc to close.");
  var table = el("table", "data viewer-table");
  table.id = "viewer-table";
  var head = el("thead");
  var body = el("tbody");
  add(table, head, body);
  var detail = el("aside", "viewer-detail");
  detail.id = "viewer-detail";
  detail.setAttribute("aria-label", "sample detail");
  detail.tabIndex = -1;
  detail.hidden = true;
  add(root, controls, keys, add(el("div", "pager"), prev, next, status), table, detail);
  body.addEventListener("click", function (event) {
    var row = event.target.closest ? event.target.closest("tr") : null;
    if (!row || row.dataset.i === undefined) return;
    open(Number(row.dataset.i));
  });
  document.addEventListener("keydown", function (event) {
    var target = event.target, tag = target && target.tagName;
    if (event.altKey || event.ctrlKey || event.metaKey || tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
    var arrows = state.open >= 0 && (event.key === "ArrowDown" || event.key === "ArrowUp");
    if (event.key === "j" || event.key === "k" || arrows) {
      event.preventDefault();
      step(event.key === "j" || event.key === "ArrowDown" ? 1 : -1);
    } else if (event.key === "Escape" && state.open >= 0) {
      close();
    }
  });

  // --- pass@k and pass^k over repeats, each model of the current run against the same model in the other ---
  function repeatsTable() {
    var t = el("table", "data viewer-repeats");
    t.id = "viewer-repeats";
    add(t, el("caption", null, "Over repeats: pass@k (some of k runs pass) and pass^k (all k pass), against the "
      + "same model in the other run, on the samples both ran at least k times (paired CI and test)"));
    var hr = el("tr");
    ["model", "against", "k", "samples", "metric", "other run", "this run", "Δ", "CI", "p"].forEach(function (h) {
      hr.appendChild(el("th", null, h));
    });
    var tb = el("tbody");
    repeats.forEach(function (r) {
      [["pass_at_k", "pass@"], ["pass_hat_k", "pass^"]].forEach(function (m) {
        var d = r.metrics[m[0]], tr = el("tr");
        tr.dataset.metric = m[0];
        add(tr, el("td", null, cols[r.column].model), el("td", null, cols[r.against].run), el("td", "num", r.k),
          el("td", "num", r.samples), el("td", null, m[1] + r.k), el("td", "num", num(d.b)), el("td", "num", num(d.a)),
          el("td", "num " + (d.delta === 0 ? "" : d.delta > 0 ? "up" : "down"), signed(d.delta)),
          el("td", "num", "[" + signed(d.low) + ", " + signed(d.high) + "]"),
          el("td", d.significant ? (d.delta < 0 ? "bad" : "ok") : null, d.p + (d.significant ? " (significant)" : "")));
        tb.appendChild(tr);
      });
    });
    return add(t, add(el("thead"), hr), tb);
  }

  function buildHead() {
    columnsShown = tableColumns();
    if (!columnsShown.some(function (c) { return c.key === state.sort; })) { state.sort = "eqs-0"; state.desc = false; }
    var row = el("tr");
    columnsShown.forEach(function (c) {
      var th = el("th"), button = el("button", "sort", c.label);
      button.type = "button";
      button.dataset.key = c.key;
      th.dataset.key = c.key;
      th.setAttribute("aria-sort", c.key === state.sort ? (state.desc ? "descending" : "ascending") : "none");
      th.appendChild(button);
      button.addEventListener("click", function () {
        state.desc = state.sort === c.key ? !state.desc : false;
        state.sort = c.key;
        state.page = 0;
        Array.prototype.forEach.call(head.querySelectorAll("th"), function (h) {
          h.setAttribute("aria-sort", h.dataset.key === state.sort ? (state.desc ? "descending" : "ascending") : "none");
        });
        order();
        render();
      });
      row.appendChild(th);
    });
    head.textContent = "";
    head.appendChild(row);
  }

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
  function keep(i, bucketCol) {
    var r = result(state.col, i), s = samples[i];
    if (state.topic && s[1] !== state.topic) return false;
    if (state.bucket && bucketOf(bucketCol, i) !== Number(state.bucket)) return false;
    var v = valid(state.col, i);
    if (state.validity && (v === null || (v === 1) !== (state.validity === "valid"))) return false;
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
    var column = columnsShown.filter(function (c) { return c.key === state.sort; })[0] || columnsShown[0];
    var values = new Array(samples.length), desc = state.desc;
    view.forEach(function (i) { values[i] = column.value(i); });
    view.sort(function (a, b) {
      var x = values[a], y = values[b];
      if (x === null || y === null) return x === y ? a - b : x === null ? 1 : -1;  // nothing to sort by: last
      var c = column.text ? byText(x, y) : x - y;
      return c === 0 ? a - b : desc ? -c : c;
    });
  }
  function refresh() {
    view = [];
    var bucketCol = bucketColumn();
    for (var i = 0; i < samples.length; i++) if (keep(i, bucketCol)) view.push(i);
    order();
    render();
  }
  function cell(c, i) {
    var v = c.value(i), k;
    if (c.key.indexOf("valid-") === 0) return v === null ? el("td", "muted", "—") : v ? el("td", "ok", "yes") : el("td", "bad", "no");
    if (c.key.indexOf("bucket-") === 0) {
      k = v === null ? "" : bucketNames[v];
      var td = el("td", k ? "bucket bucket-" + k : "muted", k ? k.replace(/_/g, " ") : "—");
      return td;
    }
    if (c.key.indexOf("delta-") === 0) return el("td", "num " + (v === null || v === 0 ? "" : v > 0 ? "up" : "down"), signed(v));
    if (c.key.indexOf("eqs-") === 0) return el("td", "num", num(v));
    if (c.key.indexOf("passes-") === 0) {
      var counts = passes[Number(c.key.slice(7))][i];
      return counts ? el("td", "num" + (counts[1] < counts[0] ? " down" : ""), counts[1] + " of " + counts[0]) : el("td", "muted", "—");
    }
    if (c.key === "id") return add(el("td"), el("button", "link", v));
    return el("td", null, v || "—");
  }
  function render() {
    var pages = Math.max(1, Math.ceil(view.length / PAGE));
    state.page = Math.min(Math.max(state.page, 0), pages - 1);
    var start = state.page * PAGE, rows = view.slice(start, start + PAGE);
    var fragment = document.createDocumentFragment();
    rows.forEach(function (i) {
      var tr = el("tr");
      tr.dataset.i = String(i);
      if (i === state.open) tr.className = "open";
      columnsShown.forEach(function (c) { tr.appendChild(cell(c, i)); });
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

  // --- one sample, beside the table: the table keeps its place ---
  function open(i) {
    if (!results) { bodyReady.then(function () { open(i); }); return; }
    state.open = i;
    Array.prototype.forEach.call(body.querySelectorAll("tr.open"), function (tr) { tr.className = ""; });
    var row = body.querySelector('tr[data-i="' + i + '"]');
    if (row) row.className = "open";
    showDetail();
    detail.hidden = false;
    detail.scrollTop = 0;
    detail.focus({ preventScroll: true });
  }
  function close() {
    detail.hidden = true;
    detail.textContent = "";
    state.open = -1;
    render();
  }
  function step(by) {
    if (!view.length) return;
    var at = view.indexOf(state.open), to = at < 0 ? state.page * PAGE : Math.min(Math.max(at + by, 0), view.length - 1);
    var page = Math.floor(to / PAGE);
    if (page !== state.page) { state.page = page; render(); }
    open(view[to]);
    var row = body.querySelector('tr[data-i="' + view[to] + '"]');
    if (row && row.scrollIntoView) row.scrollIntoView({ block: "nearest" });
  }
  function block(title, text, missing) {
    var box = el("div", "block");
    add(box, el("h4", null, title));
    box.appendChild(text === null || text === undefined ? el("p", "muted", missing) : el("pre", null, text));
    return box;
  }
  function showDetail() {
    var i = state.open, s = samples[i], d = details[i];
    detail.textContent = "";
    var shut = el("button", "close", "close ✕");
    shut.type = "button";
    shut.addEventListener("click", close);
    var title = el("h3", null, "Sample ");
    title.appendChild(el("code", null, s[0]));
    var at = view.indexOf(i);
    add(detail, shut, title,
      el("p", "muted", [s[1] && "topic " + s[1], s[2] && "complexity " + s[2], s[3],
                        at >= 0 ? (at + 1) + " of " + view.length + " (j / k)" : ""].filter(Boolean).join(" · ")));
    var missing = "not available: the dataset file named by the run cannot be read here";
    add(detail, add(el("div", "cards"),
      block("Source text", d[0], missing),
      block("Gold", pretty(d[2]), missing)));
    var schema = el("details");
    add(schema, el("summary", null, "Schema"),
      d[1] < 0 ? el("p", "muted", missing) : el("pre", null, pretty(S[d[1]])));
    detail.appendChild(schema);
    var outputs = el("div", "cards outputs");
    cols.forEach(function (c, k) { outputs.appendChild(outputCard(k, i, d)); });
    add(detail, el("h4", null, "Outputs"), outputs, el("h4", null, "Field-level diff"), diffTable(i));
  }
  function outputCard(k, i, d) {
    var r = result(k, i), card = el("div", "card output");
    card.dataset.column = String(k);
    card.appendChild(el("h4", null, colName(k)));
    if (!r) return add(card, el("p", "muted", "not in this run"));
    var b = bucketOf(k, i);
    add(card, el("p", r[1] ? "ok" : "bad", "EQS " + num(r[0]) + " · " + (r[1] ? "valid" : "invalid")
      + (r[2] && r[2] !== "invalid" && !r[6] ? " (" + r[2] + ")" : "")
      + (b !== null ? " · " + bucketNames[b].replace(/_/g, " ") + " vs " + buckets[k].against : "")));
    if (r[6]) {  // nothing could be read from the output: said once, here
      add(card, el("p", "bad unusable", "Unusable output: " + r[6]));
      card.appendChild(r[3] === null ? el("p", "muted", "no output") : el("pre", "raw", r[3]));
    } else {
      r[4].forEach(function (p) { card.appendChild(el("p", "bad", p)); });
      card.appendChild(r[3] === null ? el("p", "muted", "no output") : el("pre", "pretty", pretty(r[3])));
    }
    if (r[6] || r[3] === null) return card;
    var mine = canonical(r[3]);
    card.appendChild(diffBlock("Diff against the gold", canonical(d[2]), mine, "gold", "output", "diff-gold"));
    var other = partner(k), o = other === null ? null : result(other, i);
    if (o) {
      var theirs = o[6] || o[3] === null ? null : canonical(o[3]);
      card.appendChild(diffBlock("Diff against " + colName(other), theirs, mine, colName(other), colName(k), "diff-other",
        o[6] ? "nothing to compare: its output is unusable" : null));
    }
    return card;
  }
  function diffBlock(title, before, after, beforeName, afterName, cls, reason) {
    var box = el("details", "diff-block " + cls), summary = el("summary", null, title);
    box.appendChild(summary);
    if (before === null || after === null) {
      box.appendChild(el("p", "muted", reason || "nothing to compare: the " + (before === null ? beforeName : afterName)
        + " is not available as JSON"));
      return box;
    }
    var lines = lineDiff(before.split("\n"), after.split("\n"));
    if (lines === null) return add(box, el("p", "muted", "too long to diff here"));
    var changed = lines.filter(function (l) { return l[0] !== " "; }).length;
    summary.textContent = title + (changed ? " (" + changed + " line(s) differ)" : " (the same)");
    if (changed) box.open = true;
    var pre = el("pre", "json-diff");
    pre.appendChild(el("span", "legend", "- " + beforeName + "\n+ " + afterName + "\n"));
    lines.forEach(function (l) {
      pre.appendChild(el("span", l[0] === "+" ? "ins" : l[0] === "-" ? "del" : "same", l[0] + " " + l[1] + "\n"));
    });
    box.appendChild(pre);
    return box;
  }
  function lineDiff(a, b) {  // a longest-common-subsequence diff: [" " | "-" | "+", line]
    var n = a.length, m = b.length;
    if (n * m > MAX_DIFF_CELLS) return null;
    var lcs = new Array(n + 1);
    for (var x = 0; x <= n; x++) lcs[x] = new Uint32Array(m + 1);
    for (x = n - 1; x >= 0; x--) {
      for (var y = m - 1; y >= 0; y--) {
        lcs[x][y] = a[x] === b[y] ? lcs[x + 1][y + 1] + 1 : Math.max(lcs[x + 1][y], lcs[x][y + 1]);
      }
    }
    var out = [];
    x = 0; y = 0;
    while (x < n && y < m) {
      if (a[x] === b[y]) { out.push([" ", a[x]]); x++; y++; }
      else if (lcs[x + 1][y] >= lcs[x][y + 1]) { out.push(["-", a[x]]); x++; }
      else { out.push(["+", b[y]]); y++; }
    }
    for (; x < n; x++) out.push(["-", a[x]]);
    for (; y < m; y++) out.push(["+", b[y]]);
    return out;
  }
  // a similarity-paired list's elements under its cell: paired exactly, by similarity (with it), missed, spurious
  function elementList(elements, p) {
    if (!elements || !elements.length) return null;
    var list = el("ul", "elements");
    for (var j = 0; j < elements.length; j += 5) {
      if (elements[j] !== p) continue;
      var kind = D.element_kinds[elements[j + 1]], e = elements[j + 2], q = elements[j + 3];
      var text = kind === "missed" ? S[e] : kind === "spurious" ? S[q] : kind === "exact" ? S[q] : S[e] + " ~ " + S[q];
      var item = el("li", "el-" + kind, text);
      item.dataset.kind = kind;
      item.insertBefore(el("span", "tag", kind + (elements[j + 4] >= 0 ? " " + elements[j + 4].toFixed(2) : "")),
        item.firstChild);
      list.appendChild(item);
    }
    return list.childNodes.length ? list : null;
  }
  function diffTable(i) {
    var gold = {}, g = details[i][3], paths = {}, byCol = [];
    for (var j = 0; j < g.length; j += 2) { gold[g[j]] = g[j + 1]; paths[g[j]] = 0; }
    cols.forEach(function (c, k) {
      var r = result(k, i), fields = {};
      if (r && !r[6]) for (var j = 0; j < r[5].length; j += 4) {
        var f = r[5];
        fields[f[j]] = [f[j + 1], f[j + 2], f[j + 3]];
        if (f[j + 1] !== 0) paths[f[j]] = 1;
        else if (!(f[j] in paths)) paths[f[j]] = 0;
      }
      byCol.push(fields);
    });
    var ordered = Object.keys(paths).map(Number).sort(function (a, b) {
      return paths[b] - paths[a] || byText(S[a], S[b]);
    });
    var t = el("table", "data diff viewer-diff"), headRow = el("tr");
    add(headRow, el("th", null, "field"), el("th", null, "gold"));
    cols.forEach(function (c, k) { headRow.appendChild(el("th", null, colName(k))); });
    add(t, add(el("thead"), headRow));
    var tb = el("tbody");
    ordered.forEach(function (p, row) {
      var tr = el("tr");
      var name = el("td");
      name.appendChild(el("code", null, S[p]));
      add(tr, name, el("td", "val", p in gold ? S[gold[p]] : "—"));
      byCol.forEach(function (fields, k) {
        var r = result(k, i);
        if (r && r[6]) {  // an unusable output: one cell down the column, not a value per field
          if (row === 0) {
            var whole = el("td", "val unusable", "unusable output: no field could be read");
            whole.rowSpan = ordered.length;
            tr.appendChild(whole);
          }
          return;
        }
        var f = fields[p];
        if (!f) { tr.appendChild(el("td", "val muted", "—")); return; }
        var category = f[0] >= 0 ? cats[f[0]] : "other";
        var td = el("td", "val cat-" + category, f[2] < 0 ? (p in gold ? S[gold[p]] : "") : S[f[2]]);
        td.dataset.category = category;
        add(td, el("span", "tag", category + (category === "exact" ? "" : " " + f[1].toFixed(2))));
        add(td, elementList(r[8], p));
        tr.appendChild(td);
      });
      tb.appendChild(tr);
    });
    if (!ordered.length) tb.appendChild(add(el("tr"), el("td", "muted", "no field")));
    t.appendChild(tb);
    return t;
  }

  (D.notes || []).forEach(function (n) { root.insertBefore(el("p", "note", n), controls); });
  if (repeats.length) root.insertBefore(repeatsTable(), controls);
  buildHead();
  refresh();
  var bodyReady = parsedPage().then(afterPaint).then(function () {
    var element = document.getElementById("viewer-body");
    return element ? unpack(element) : Promise.reject(new Error("no viewer-body element"));
  }).then(function (B) {
    S = B.strings;
    results = B.results;
    details = B.details;
    var failing = {};
    results.forEach(function (column) {
      column.forEach(function (r) {
        if (!r) return;
        for (var j = 0; j < r[5].length; j += 4) if (r[5][j + 1] !== 0) failing[r[5][j]] = true;
      });
    });
    Object.keys(failing).map(Number).sort(function (a, b) { return byText(S[a], S[b]); })
      .forEach(function (p) { fieldSelect.appendChild(option(String(p), S[p])); });
    search.disabled = catSelect.disabled = fieldSelect.disabled = false;
    root.dataset.ready = "1";
  }, failed);
  }
})();
