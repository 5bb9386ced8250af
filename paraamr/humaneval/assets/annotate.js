/* The annotation page: one pair at a time, answers kept in localStorage under the kit id.
   Each save also goes to sessionStorage, and a load takes whichever copy was saved last: Chromium
   can open a reloaded file:// page on a localStorage that misses the page's own writes (seen on
   Chromium 156 in about one reload in ten), while the tab's sessionStorage survives the reload. */
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("kit-data").textContent);
  var FIELDS = DATA.questions;
  var STORE = "paraamr-humaneval:" + DATA.kit;
  var $ = function (id) { return document.getElementById(id); };
  var state = { annotator: "", pos: 0, answers: {}, saves: 0 };
  var storageOk = true;
  var active = FIELDS[0];

  function stored(area) {
    try {
      var raw = window[area].getItem(STORE);
      return raw ? JSON.parse(raw) : null;
    } catch (e) {
      if (area === "localStorage") { storageOk = false; }
      return null;
    }
  }

  function load() {
    var copies = [stored("localStorage"), stored("sessionStorage")].filter(Boolean);
    copies.sort(function (a, b) { return (b.saves || 0) - (a.saves || 0); });
    var s = copies[0];
    if (s) {
      state.annotator = s.annotator || "";
      state.answers = s.answers || {};
      state.pos = Math.min(Math.max(s.pos || 0, 0), DATA.items.length - 1);
      state.saves = s.saves || 0;
    }
  }

  function save() {
    state.saves += 1;
    var raw = JSON.stringify(state);
    try { window.sessionStorage.setItem(STORE, raw); } catch (e) { /* localStorage decides */ }
    if (!storageOk) { return; }
    try {
      window.localStorage.setItem(STORE, raw);
    } catch (e) {
      storageOk = false;
      say("This browser does not keep answers: download them before closing the page.");
    }
  }

  function say(text) { $("status").textContent = text; }

  function item() { return DATA.items[state.pos]; }

  function answered(id) {
    var a = state.answers[id];
    return !!a && FIELDS.every(function (f) { return a[f] !== undefined; });
  }

  function setActive(field) {
    active = field;
    FIELDS.forEach(function (f) {
      $("q-" + f).classList.toggle("active", f === field);
    });
  }

  function render() {
    var it = item();
    $("source").textContent = it.source;
    $("paraphrase").textContent = it.paraphrase;
    $("position").textContent = "Pair " + (state.pos + 1) + " of " + DATA.items.length;
    var a = state.answers[it.id] || {};
    FIELDS.forEach(function (f) {
      document.querySelectorAll('input[name="' + f + '"]').forEach(function (r) {
        r.checked = a[f] !== undefined && String(a[f]) === r.value;
      });
    });
    var done = DATA.items.filter(function (x) { return answered(x.id); }).length;
    $("progress").value = done;
    $("progress").max = DATA.items.length;
    $("progress-text").textContent = done + " of " + DATA.items.length + " answered";
    $("prev").disabled = state.pos === 0;
    $("next").disabled = state.pos === DATA.items.length - 1;
    var first = FIELDS.filter(function (f) { return a[f] === undefined; })[0];
    setActive(first || FIELDS[0]);
  }

  function answer(field, value) {
    var id = item().id;
    var a = state.answers[id] || {};
    a[field] = value;
    a.answered_at = new Date().toISOString();
    state.answers[id] = a;
    save();
  }

  function go(delta) {
    var p = state.pos + delta;
    if (p < 0 || p >= DATA.items.length) { return; }
    state.pos = p;
    save();
    render();
  }

  function rows() {
    return DATA.items.filter(function (x) { return state.answers[x.id]; }).map(function (x) {
      var a = state.answers[x.id];
      var r = { item_id: x.id, annotator: state.annotator };
      FIELDS.forEach(function (f) { r[f] = a[f] === undefined ? null : a[f]; });
      r.answered_at = a.answered_at;
      return r;
    });
  }

  function csvCell(v) {
    var s = v === null || v === undefined ? "" : String(v);
    return /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  }

  function download(kind) {
    if (!state.annotator.trim()) {
      say("Enter your annotator id first.");
      $("annotator").focus();
      return;
    }
    var body, type;
    if (kind === "json") {
      body = JSON.stringify({ format: "paraamr-humaneval-answers/1", kit: DATA.kit,
                              annotator: state.annotator, answers: rows() }, null, 1);
      type = "application/json";
    } else {
      var cols = ["kit", "annotator", "item_id"].concat(FIELDS, ["answered_at"]);
      var lines = [cols.join(",")];
      rows().forEach(function (r) {
        r.kit = DATA.kit;
        lines.push(cols.map(function (c) { return csvCell(r[c]); }).join(","));
      });
      body = lines.join("\n") + "\n";
      type = "text/csv";
    }
    var safe = state.annotator.replace(/[^A-Za-z0-9_-]+/g, "_");
    var a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([body], { type: type }));
    a.download = "answers-" + safe + "-" + DATA.kit + "." + kind;
    document.body.appendChild(a);
    a.click();
    a.remove();
    say("Downloaded " + rows().length + " answered pairs.");
  }

  function onKey(e) {
    var t = e.target;
    if (t && t.tagName === "INPUT" && t.type === "text") { return; }
    if (e.altKey || e.ctrlKey || e.metaKey) { return; }
    if (e.key === "1" || e.key === "2" || e.key === "3") {
      e.preventDefault();
      var field = active;
      answer(field, Number(e.key));
      var id = item().id;
      if (answered(id) && field === FIELDS[FIELDS.length - 1] && state.pos < DATA.items.length - 1) {
        go(1);
      } else {
        render();
        var next = FIELDS.filter(function (f) { return state.answers[id][f] === undefined; })[0];
        setActive(next || field);
      }
      return;
    }
    var inRadio = t && t.tagName === "INPUT" && t.type === "radio";
    if (inRadio) { return; }  // arrows move within a radio group, as everywhere
    if (e.key === "ArrowRight") { e.preventDefault(); go(1); }
    else if (e.key === "ArrowLeft") { e.preventDefault(); go(-1); }
    else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      var i = FIELDS.indexOf(active) + (e.key === "ArrowDown" ? 1 : -1);
      setActive(FIELDS[(i + FIELDS.length) % FIELDS.length]);
    }
  }

  load();
  $("annotator").value = state.annotator;
  $("annotator").addEventListener("input", function () {
    state.annotator = $("annotator").value;
    save();
  });
  FIELDS.forEach(function (f) {
    document.querySelectorAll('input[name="' + f + '"]').forEach(function (r) {
      r.addEventListener("change", function () {
        answer(f, Number(r.value));
        render();  // the highlight moves to the next unanswered question, as with the keys
      });
    });
    $("q-" + f).addEventListener("focusin", function () { setActive(f); });
  });
  $("prev").addEventListener("click", function () { go(-1); });
  $("next").addEventListener("click", function () { go(1); });
  $("download-csv").addEventListener("click", function () { download("csv"); });
  $("download-json").addEventListener("click", function () { download("json"); });
  document.addEventListener("keydown", onKey);
  if (!storageOk) { say("This browser does not keep answers: download them before closing the page."); }
  render();
})();
