/* cutelab playground page: tabs from /api/tabs, a form per tab, pictures from /api/figure.
   State lives in the address bar (?tab=...&field=value...), so every picture is a link. */
(function () {
  "use strict";
  var DEBOUNCE_MS = 60;
  var BAR_PX = 22;  /* the figure's tool bar (zoom buttons) above the picture, margins included */
  var tabs = [], byId = {}, current = null, seq = 0, timer = null, inflight = null, lastInput = null;
  var $ = function (id) { return document.getElementById(id); };
  /* how the page asks cutelab: GET /api/... of `cutelab serve` over HTTP, or, in the static site
     (`cutelab site`), site.js's cutelabApi, which answers the same URLs with Python in the browser */
  var api = window.cutelabApi || function (url, opts) { return fetch(url, opts); };
  var stats = window.cutelabPlayground = { timings: [], renders: 0, errors: 0 };
  /* the clicked thread (and block) of the picture: part of the address too */
  var selected = { thread: null, block: null };
  /* what the cells show (value, index, coord): kept across edits and tabs, and in the address */
  var cellsShow = "value";

  /* the values of the fields that apply (a field whose "when" does not hold is hidden and left out:
     the server takes its default) */
  function valuesFromForm() {
    var all = {}, out = {};
    current.fields.forEach(function (f) { all[f.name] = $("f-" + f.name).value; });
    current.fields.forEach(function (f) { if (applies(f, all)) out[f.name] = all[f.name]; });
    return out;
  }
  function applies(f, values) {
    return !f.when || new RegExp("^(?:" + f.when.pattern + ")$").test(values[f.when.field] || "");
  }
  /* show the fields that apply, hide the others */
  function showApplicable() {
    var all = {};
    current.fields.forEach(function (f) { all[f.name] = $("f-" + f.name).value; });
    current.fields.forEach(function (f) {
      var lab = $("f-" + f.name).parentNode, hide = !applies(f, all);
      if (lab.hidden !== hide) { lab.hidden = hide; space = null; }  /* the form's height may change */
    });
  }
  /* a text box as wide as its text (and the field's default), within bounds */
  function fitWidth(el, f) {
    var n = Math.max(el.value.length, f.default.length, 12) + 3;
    el.style.width = Math.min(n, 56) + "ch";
  }
  function query(values, extra) {
    var p = new URLSearchParams();
    p.set("tab", current.id);
    current.fields.forEach(function (f) { if (values[f.name] !== undefined) p.set(f.name, values[f.name]); });
    Object.keys(extra || {}).forEach(function (k) { p.set(k, extra[k]); });
    return p.toString();
  }
  function pageQuery(values) {
    var sel = {};
    if (selected.thread !== null) sel.thread = selected.thread;
    if (selected.block !== null) sel.block = selected.block;
    if (cellsShow !== "value") sel.show = cellsShow;
    return query(values, sel);
  }
  function setAddress(how) {
    var url = "?" + pageQuery(valuesFromForm());
    if (how === "push") window.history.pushState(null, "", url);
    else window.history.replaceState(null, "", url);
    $("share").href = url;
  }
  function intParam(v) { return v !== null && /^-?\d+$/.test(v) ? parseInt(v, 10) : null; }

  function buildNav() {
    var nav = $("tabs"), group = null;
    tabs.forEach(function (t) {
      var b = document.createElement("button");
      b.type = "button";
      b.role = "tab";
      b.textContent = t.title;
      b.dataset.tab = t.id;
      b.id = "tab-" + t.id;
      if (group !== null && t.group !== group) b.className = "sep";
      group = t.group;
      b.addEventListener("click", function () {
        if (!current || current.id !== t.id) { selected = { thread: null, block: null }; select(t.id, null, true); }
      });
      nav.appendChild(b);
    });
  }

  /* the tab's examples: a menu that fills the whole form (a field a preset leaves out: its default) */
  function buildPresets(t) {
    var form = $("form");
    if (!t.presets || !t.presets.length) return;
    var lab = document.createElement("label");
    lab.className = "presets";
    lab.appendChild(document.createTextNode("examples"));
    var el = document.createElement("select");
    el.id = "presets";
    var o = document.createElement("option");
    o.value = "";
    o.textContent = "(choose an example)";
    el.appendChild(o);
    t.presets.forEach(function (p, i) {
      var op = document.createElement("option");
      op.value = String(i);
      op.textContent = p.name;
      el.appendChild(op);
    });
    el.addEventListener("change", function () {
      if (el.value === "") return;
      var p = t.presets[+el.value];
      selected = { thread: null, block: null };
      buildForm(t, p.values, +el.value);
      update("push");
    });
    lab.appendChild(el);
    form.appendChild(lab);
  }

  function buildForm(t, given, preset) {
    var form = $("form");
    form.textContent = "";
    space = null;
    buildPresets(t);
    if (preset !== undefined && $("presets")) $("presets").value = String(preset);
    t.fields.forEach(function (f) {
      var lab = document.createElement("label");
      lab.appendChild(document.createTextNode(f.label + (f.optional ? " (optional)" : "")));
      var el;
      if (f.choices.length) {
        el = document.createElement("select");
        f.choices.forEach(function (c) {
          var o = document.createElement("option");
          o.value = c;
          o.textContent = c === "" ? "(default)" : c;
          el.appendChild(o);
        });
      } else {
        el = document.createElement("input");
        el.type = "text";
        el.spellcheck = false;
        el.placeholder = f.help || f.default;
      }
      el.id = "f-" + f.name;
      el.name = f.name;
      el.value = given && given[f.name] !== undefined && given[f.name] !== null ? given[f.name] : f.default;
      if (!f.choices.length) {
        fitWidth(el, f);
        el.addEventListener("input", function () { fitWidth(el, f); });
      }
      el.addEventListener("input", schedule);
      el.addEventListener("change", schedule);
      lab.appendChild(el);
      if (f.help && !f.choices.length) {
        var s = document.createElement("small");
        s.textContent = f.help;
        lab.appendChild(s);
      }
      form.appendChild(lab);
    });
    showApplicable();
  }

  function select(id, given, push) {
    current = byId[id] || tabs[0];
    Array.prototype.forEach.call($("tabs").children, function (b) {
      b.setAttribute("aria-selected", b.dataset.tab === current.id ? "true" : "false");
    });
    $("doc").textContent = current.doc;
    document.body.dataset.tab = current.id;
    buildForm(current, given);
    update(push ? "push" : "replace");
  }

  function schedule() {
    if ($("presets")) $("presets").value = "";  /* edited: no longer the example as it was */
    showApplicable();
    lastInput = performance.now();
    clearTimeout(timer);
    document.body.dataset.state = "busy";
    timer = setTimeout(function () { update("replace"); }, DEBOUNCE_MS);
  }

  /* the error's first line over the status line (the picture stays where it is, dimmed), its whole
     text as the tooltip, and the field it blames marked */
  function markField(name) {
    Array.prototype.forEach.call($("form").querySelectorAll(".bad"), function (el) {
      el.classList.remove("bad");
      el.removeAttribute("aria-invalid");
    });
    var el = name ? $("f-" + name) : null;
    if (el) { el.classList.add("bad"); el.setAttribute("aria-invalid", "true"); }
  }
  function hideError() {
    var e = $("error");
    e.classList.remove("shown");
    e.textContent = "";
    e.removeAttribute("title");
    markField(null);
  }
  function showError(msg, fieldName) {
    var e = $("error");
    e.textContent = msg;
    e.title = msg;
    e.classList.add("shown");
    markField(fieldName || null);
    $("picture").classList.add("stale");
    stats.errors++;
    document.body.dataset.state = "error";
  }

  function update(history_) {
    var values = valuesFromForm();
    var qs = query(values);
    setAddress(history_);
    ["html", "svg", "txt"].forEach(function (f) { $("export-" + f).href = "/api/export?" + query(values, { format: f }); });
    var my = ++seq;
    if (inflight) inflight.abort();
    inflight = window.AbortController ? new AbortController() : null;
    document.body.dataset.state = "busy";
    var t0 = performance.now(), tin = lastInput;
    lastInput = null;
    api("/api/figure?" + qs, inflight ? { signal: inflight.signal } : {})
      .then(function (r) { return r.json(); })
      .then(function (j) {
        if (my !== seq) return;
        var t1 = performance.now();
        if (!j.ok) { showError(j.error, j.field); return; }
        var pic = $("picture");
        /* the space the picture will have, as measured after the last paint (reading it now would
           lay out the old picture again: 100 ms for a labelled 64 x 64 grid) */
        var size = space || measureSpace();
        pic.innerHTML = j.html;
        pic.classList.remove("stale");
        hideError();
        var fig = window.CutelabFigure.init(pic.querySelector(".cutelab-fig"),
                                            { wheel: "always", height: function () { return pictureHeight(); }, size: size,
                                              show: cellsShow });
        if (fig) {
          /* keep the clicked thread across edits (and from a shared address) while the picture has it */
          if (selected.thread !== null && !(fig.hasThreads && fig.highlight(selected.thread, selected.block))) {
            selected = { thread: null, block: null };
            setAddress("replace");
          }
          fig.root.addEventListener("cutelab:show", function (e) {
            cellsShow = e.detail.show;
            setAddress("replace");
          });
          fig.root.addEventListener("cutelab:select", function (e) {
            selected = { thread: e.detail.thread, block: e.detail.block };
            setAddress("replace");
          });
        }
        var t2 = performance.now();
        requestAnimationFrame(function () {
          requestAnimationFrame(function () {
            if (my !== seq) return;
            var t3 = performance.now();
            space = measureSpace();  /* layout is clean here: cheap */
            var rec = { tab: current.id, fetch: t1 - t0, dom: t2 - t1, total: t2 - t0, painted: t3 - t0, server: j.ms,
              sinceInput: tin === null ? null : t3 - tin };
            stats.timings.push(rec);
            stats.renders++;
            $("timing").textContent = "answered in " + rec.total.toFixed(1) + " ms (server " +
              (j.ms.figure + j.ms.svg + j.ms.cells).toFixed(1) + " ms)";
            document.body.dataset.renders = String(stats.renders);
            document.body.dataset.state = "ok";
          });
        });
      })
      .catch(function (err) {
        if (err && err.name === "AbortError") return;
        if (my === seq) showError("cannot reach the cutelab server: " + err);
      });
  }

  /* the picture fits between its top and the bottom of the window */
  var space = null;
  function measureSpace() {
    var pic = $("picture");
    return [pic.clientWidth, pictureHeight(pic.getBoundingClientRect().top + window.scrollY + BAR_PX)];
  }
  window.addEventListener("resize", function () { space = null; });

  function pictureHeight(top) {
    if (top === undefined) {
      var box = $("picture").querySelector(".cutelab-pic");
      top = box ? box.getBoundingClientRect().top + window.scrollY : 200;
    }
    return Math.max(240, window.innerHeight - top - 12);
  }

  function fromLocation() {
    var p = new URLSearchParams(window.location.search);
    var id = p.get("tab");
    var given = {};
    p.forEach(function (v, k) { if (k !== "tab" && k !== "thread" && k !== "block" && k !== "show") given[k] = v; });
    cellsShow = ["index", "coord"].indexOf(p.get("show")) >= 0 ? p.get("show") : "value";
    selected = { thread: intParam(p.get("thread")), block: intParam(p.get("block")) };
    return { id: id && byId[id] ? id : tabs[0].id, given: given };
  }

  window.addEventListener("popstate", function () {
    var s = fromLocation();
    select(s.id, s.given, false);
  });

  api("/api/tabs").then(function (r) { return r.json(); }).then(function (j) {
    tabs = j.tabs;
    tabs.forEach(function (t) { byId[t.id] = t; });
    buildNav();
    var s = fromLocation();
    select(s.id, s.given, false);
  }).catch(function (err) { showError("cannot load the tabs from the cutelab server: " + err); });
})();
