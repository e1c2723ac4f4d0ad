/* cutelab static site (`cutelab site DIR`): the playground's page with cutelab running in the
   browser through Pyodide, from disk (file://) or any static host, with no server.

   Loaded before playground.js. It defines window.cutelabApi, which playground.js calls instead of
   fetch: the same GET /api/... URLs, answered by cutelab.web.server.api() in Pyodide.

   Browsers refuse fetch() and XHR of file:// URLs, and Pyodide loads its wasm, standard library,
   lock file and numpy wheel with fetch(). So `cutelab site` writes each of those files as a script,
   data/NAME.js, that hands its bytes (base64, gzipped where that saves space) to
   cutelabSite.deliver(); scripts load from file:// like from any host. Pyodide's fetch() of
   those names is answered from them (window.fetch is wrapped for exactly those URLs), and the
   rest of the page's requests go to the real fetch. */
(function () {
  "use strict";
  var manifest = window.cutelabSiteManifest;
  var here = document.currentScript.src;
  var root = new URL("../", here).href;            /* the site's folder */
  var pyodideURL = new URL("pyodide/", root).href;  /* Pyodide's indexURL */
  var dataURL = new URL("data/", root).href;
  var waiting = {};                                 /* payload name -> {promise, resolve, reject} */
  var startedAt = performance.now();
  /* ms from this script's start to each step of the start-up: pyodide, packages, cutelab (imported) */
  var site = window.cutelabSite = { ready: null, loadMs: null, steps: {}, deliver: deliver };
  function mark(step) { site.steps[step] = Math.round(performance.now() - startedAt); }

  function fail(msg) { return new Error("cutelab site: " + msg); }

  function entry(name) {
    if (!waiting[name]) {
      var e = waiting[name] = {};
      e.promise = new Promise(function (res, rej) { e.resolve = res; e.reject = rej; });
    }
    return waiting[name];
  }

  function bytesOf(b64) {
    var s = atob(b64), out = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }

  /* called by data/NAME.js */
  function deliver(name, encoding, b64) {
    var e = entry(name), raw = bytesOf(b64);
    if (encoding === "raw") { e.resolve(raw); return; }
    var bad = function (err) { e.reject(err); broken.reject(err); };
    if (encoding !== "gzip") { bad(fail(name + ": unknown encoding " + encoding)); return; }
    if (typeof DecompressionStream !== "function") {
      bad(fail("this browser has no DecompressionStream (gzip); use a current Chrome, Edge, Firefox or Safari"));
      return;
    }
    new Response(new Blob([raw]).stream().pipeThrough(new DecompressionStream("gzip"))).arrayBuffer()
      .then(function (buf) { e.resolve(new Uint8Array(buf)); }, bad);
  }

  function loadScript(src) {
    return new Promise(function (res, rej) {
      var s = document.createElement("script");
      s.src = src;
      s.onload = function () { res(); };
      s.onerror = function () { rej(fail("cannot load " + src + " (is the site complete? run `cutelab site` again)")); };
      document.head.appendChild(s);
    });
  }

  /* a file that cannot be loaded ends the start-up with its name (Pyodide would only log a failed
     wasm and wait forever) */
  var broken = {};
  var brokenPromise = new Promise(function (res, rej) { broken.reject = rej; });
  brokenPromise.catch(function () {});

  /* the bytes of one of the site's files: loads data/NAME.js once */
  function payload(name) {
    if (!manifest.payloads[name]) return Promise.reject(fail("no file " + name + " in this site"));
    var e = entry(name);
    if (!e.loading) {
      e.loading = true;
      loadScript(dataURL + encodeURIComponent(name) + ".js").catch(function (err) { e.reject(err); broken.reject(err); });
    }
    return e.promise;
  }

  /* Pyodide's fetch() of its own files, answered from the payloads */
  var realFetch = window.fetch ? window.fetch.bind(window) : null;
  window.fetch = function (input, init) {
    var url = typeof input === "string" ? input : (input && input.url) || String(input);
    var abs = new URL(url, document.baseURI).href;
    if (abs.indexOf(pyodideURL) === 0) {
      var name = decodeURIComponent(abs.slice(pyodideURL.length).split(/[?#]/)[0]);
      if (manifest.payloads[name]) {
        return payload(name).then(function (bytes) {
          return new Response(bytes, { status: 200, headers: { "Content-Type": manifest.payloads[name] } });
        });
      }
    }
    if (!realFetch) return Promise.reject(fail("this browser has no fetch"));
    return realFetch(input, init);
  };

  function say(text) {
    var t = document.getElementById("timing");
    if (t) t.textContent = text;
  }

  /* Pyodide, numpy and cutelab, once */
  function boot() {
    say("starting Python in the browser (Pyodide " + manifest.pyodide + ", Python " + manifest.python + ")…");
    /* pyodide.asm.js as a classic script first: Pyodide would import() it, which file:// refuses */
    return loadScript(pyodideURL + "pyodide.asm.js")
      .then(function () { return loadScript(pyodideURL + "pyodide.js"); })
      .then(function () {
        return window.loadPyodide({ indexURL: pyodideURL, lockFileURL: pyodideURL + "pyodide-lock.json",
                                    stdout: function () {}, stderr: function (s) { console.warn(s); } });
      })
      .then(function (py) {
        mark("pyodide");
        return py.loadPackage(manifest.packages, { messageCallback: function () {} })
          .then(function () { mark("packages"); return payload(manifest.cutelab); })
          .then(function (zip) {
            py.unpackArchive(zip, "zip", { extractDir: manifest.sitePackages });
            py.runPython("import sys\nif " + JSON.stringify(manifest.sitePackages) + " not in sys.path: sys.path.insert(0, " +
                         JSON.stringify(manifest.sitePackages) + ")");
            var get = py.pyimport("cutelab.web.site").browser_get;
            py.runPython("import cutelab.web.server, cutelab.web.tabs, cutelab.render.svg, cutelab.render.html");
            mark("cutelab");
            site.loadMs = performance.now() - startedAt;
            say("Python ready in " + (site.loadMs / 1000).toFixed(1) + " s");
            return get;
          });
      });
  }

  site.ready = Promise.race([boot(), brokenPromise]);
  site.ready.catch(function (err) { say(""); console.error(err); });

  /* window.cutelabApi(url) -> a Response, as fetch(url) from `cutelab serve` gives */
  window.cutelabApi = function (url) {
    return site.ready.then(function (get) {
      var r = get(String(url)), parts;
      try { parts = r.toJs({ dict_converter: Object.fromEntries }); } finally { r.destroy(); }
      var headers = Object.assign({ "Content-Type": parts[2] }, parts[3]);
      return new Response(parts[1], { status: parts[0], headers: headers });
    });
  };

  /* the export links (.html .svg .txt) point at /api/export?...: compute the file here, save it */
  document.addEventListener("click", function (ev) {
    var a = ev.target && ev.target.closest ? ev.target.closest("a[href]") : null;
    var href = a ? a.getAttribute("href") : "";
    if (href.indexOf("/api/export?") !== 0) return;
    ev.preventDefault();
    window.cutelabApi(href).then(function (r) {
      var cd = r.headers.get("Content-Disposition") || "", m = /filename="([^"]+)"/.exec(cd);
      return r.blob().then(function (blob) {
        if (!r.ok) return blob.text().then(function (t) { throw fail(t); });
        var url = URL.createObjectURL(blob), tmp = document.createElement("a");
        tmp.href = url;
        tmp.download = m ? m[1] : "cutelab";
        document.body.appendChild(tmp);
        tmp.click();
        tmp.remove();
        setTimeout(function () { URL.revokeObjectURL(url); }, 10000);
      });
    }).catch(function (err) {
      var e = document.getElementById("error");
      if (e) { e.textContent = String(err.message || err); e.classList.add("shown"); }
    });
  }, true);
})();
