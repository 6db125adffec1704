/* The playground page: the reader changes the tokens, their embeddings and the stage, and
   every matrix is computed again (attention.js) and drawn. The page brings its data and its
   words in a JSON script (tools/book/playground.py); this replaces the static tables
   that a reader without JavaScript sees. The tables are drawn by tables.js; the arithmetic
   of a selected weight is explain.js's, the reading of typed values fields.js's.

   Its markup is a contract for tests: CONTRIBUTING.md, "The playground's markup". */
(function () {
  "use strict";
  var math = window.attentionMath;

  var element = window.playgroundDom.element, fill = window.playgroundDom.fill;
  var matrix = window.playgroundTables.matrix;
  var count = 0; // playgrounds on the page, for ids of their own

  function Playground(root, script) {
    this.root = root;
    this.id = "playground-" + ++count;
    this.script = script; // kept: it holds the page's data and words
    var data = (this.data = JSON.parse(script.textContent));
    this.words = data.words;
    this.stage = "3.3";
    this.selected = null; // {head, row, col} of the weight whose arithmetic is shown
    this.focused = { token: 1, dim: 0 }; // the value the slider moves: "journey", as in 3.3.1
    this.reset();
    this.build();
  }

  // choose, mark, reveal: explain.js; readValue, refuse, drawRefused: fields.js
  Object.assign(Playground.prototype, window.playgroundExplain, window.playgroundFields);

  Playground.prototype.reset = function () {
    var extra = this.data.extra;
    this.labels = this.data.tokens.slice();
    this.values = this.data.inputs.map(function (row) { return row.slice(); });
    this.count = this.labels.length;
    for (var i = this.labels.length; i < this.data.max_tokens; i++) {
      this.labels.push(fill(this.words.new_token, { n: i + 1 }));
      this.values.push(extra[i - this.data.tokens.length].slice());
    }
    this.selected = null;
  };

  Playground.prototype.select = function (name, options, value, label) {
    var select = element("select", { "data-control": name });
    options.forEach(function (o) { select.append(element("option", { value: o[0] }, [o[1]])); });
    select.value = value;
    return element("label", {}, [label + " ", select]);
  };

  Playground.prototype.build = function () {
    var self = this, words = this.words;
    var stages = Object.keys(math.STAGES).map(function (s) { return [s, words["stage_" + s]]; });
    // The trained model's stage (trained.js), where the page brings its data.
    this.trained = this.data.trained && new window.TrainedView(this, this.root.dataset.assets + this.data.trained.file);
    if (this.trained) stages.push(["trained", words.stage_trained]);
    var counts = [];
    for (var n = 2; n <= this.data.max_tokens; n++) counts.push([String(n), String(n)]);
    var reset = element("button", { type: "button", "class": "md-button", "data-control": "reset" }, [words.reset]);
    this.controls = element("div", { "class": "playground-controls" }, [
      this.select("stage", stages, this.stage, words.stage),
      this.select("tokens", counts, String(this.count), words.tokens),
      reset,
    ]);
    this.embeddings = element("div", { "class": "playground-box" });
    var limit = String(this.data.limit);
    this.slider = element("input", { type: "range", min: "-" + limit, max: limit, step: "0.01", "data-control": "slider" });
    this.sliderLabel = element("span");
    this.results = element("div", { "class": "playground-results" });
    this.explanation = element("div", { "class": "playground-explain", role: "status", "aria-live": "polite" });
    this.stale = element("div", { "class": "playground-stale", "aria-live": "polite", hidden: "" });
    this.sliderBox = element("label", { "class": "playground-slider" }, [this.sliderLabel, this.slider]);
    // The chapter's stages show these; the trained stage shows its own box instead.
    this.chapterParts = [this.controls.children[1], this.embeddings, this.sliderBox, this.explanation];
    this.root.replaceChildren.apply(this.root, [this.script, this.controls].concat(
      this.trained ? [this.trained.box] : [], this.chapterParts.slice(1), [this.stale, this.results]));
    // Listeners in the capture phase: they also hear an event that a script dispatches
    // without bubbling. "change" for the selects; "input" and "change" for the values.
    this.controls.addEventListener("change", function (event) {
      var control = event.target.getAttribute("data-control");
      if (control === "stage") self.stage = event.target.value;
      else if (control === "tokens") self.count = Number(event.target.value);
      else return;
      self.draw(control === "tokens");
    }, true);
    reset.addEventListener("click", function () {
      if (self.stage === "trained") return self.trained.reset();
      self.reset();
      self.controls.querySelector('[data-control="tokens"]').value = String(self.count);
      self.draw(true);
    });
    ["input", "change"].forEach(function (type) {
      self.embeddings.addEventListener(type, function (event) { self.edit(event.target); }, true);
    });
    this.embeddings.addEventListener("focusin", function (event) {
      if (event.target.hasAttribute("data-dim")) {
        self.focused = { token: Number(event.target.dataset.token), dim: Number(event.target.dataset.dim) };
        self.drawSlider();
      }
    });
    this.slider.addEventListener("input", function () {
      var input = self.embeddings.querySelector(
        '[data-token="' + self.focused.token + '"][data-dim="' + self.focused.dim + '"]');
      input.value = self.slider.value;
      self.edit(input);
    });
    this.results.addEventListener("keydown", function (event) { self.move(event); });
    this.results.addEventListener("focusin", function (event) {
      var cell = event.target.closest('[data-matrix="weights"]');
      if (cell) self.choose(cell);
    });
    this.results.addEventListener("click", function (event) {
      var cell = event.target.closest('[data-matrix="weights"]');
      if (cell) cell.focus();
    });
    this.draw(true);
  };

  // An embedding value or a token's label was typed.
  Playground.prototype.edit = function (input) {
    var token = Number(input.dataset.token);
    var words = this.words, labels = this.labels;
    if (input.hasAttribute("data-label")) {
      if (labels[token] === input.value) return; // "change" after "input": done already
      labels[token] = input.value;
      this.embeddings.querySelectorAll('[data-dim][data-token="' + token + '"]').forEach(function (field) {
        field.setAttribute("aria-label", fill(words.value_of, { token: labels[token], dim: Number(field.dataset.dim) + 1 }));
      });
    } else {
      var read = this.readValue(input.value), value = read.value;
      this.refuse(input, read.message || null);
      var dim = Number(input.dataset.dim);
      // Nothing to redraw for "change" after "input" (a redraw would replace the cell that
      // the reader is clicking, as the field loses the focus).
      if (read.message || this.values[token][dim] === value) return;
      this.values[token][dim] = value;
      if (this.focused.token === token) this.drawSlider();
    }
    this.draw(false);
  };

  Playground.prototype.drawEmbeddings = function () {
    var words = this.words, dims = this.values[0].length, rows = [];
    var head = [element("th", { scope: "col" }, [words.token])];
    for (var d = 0; d < dims; d++) head.push(element("th", { scope: "col" }, [String(d + 1)]));
    for (var i = 0; i < this.count; i++) {
      var cells = [element("th", { scope: "row" }, [element("input", {
        type: "text", value: this.labels[i], "data-label": "", "data-token": i,
        "aria-label": words.token + " " + (i + 1) })])];
      // Text, not type="number": that reads "0,5" as nothing (or 5) where the browser's
      // language writes 0.5; no inputmode="decimal": iOS's decimal pad has no minus sign.
      for (d = 0; d < dims; d++) {
        cells.push(element("td", {}, [element("input", {
          type: "text", autocomplete: "off", spellcheck: "false",
          value: String(this.values[i][d]), "data-token": i, "data-dim": d,
          "aria-label": fill(words.value_of, { token: this.labels[i], dim: d + 1 }) })]));
      }
      rows.push(element("tr", {}, cells));
    }
    // A focused field that is removed fires "change" as it goes (Chrome): it goes first,
    // so that what it refuses is not noted after the new fields are.
    if (this.embeddings.contains(document.activeElement)) document.activeElement.blur();
    this.refused = {}; // "token,dim" -> {token, dim, message}: the fields refused (fields.js)
    this.embeddings.replaceChildren(element("table", { "class": "playground-embeddings" }, [
      element("caption", {}, [words.embeddings]),
      element("thead", {}, [element("tr", {}, head)]),
      element("tbody", {}, rows)]));
  };

  Playground.prototype.drawSlider = function () {
    if (this.focused.token >= this.count) this.focused = { token: 0, dim: 0 };
    var f = this.focused;
    this.sliderLabel.textContent = fill(this.words.slider, { token: this.labels[f.token], dim: f.dim + 1 }) + " ";
    this.slider.value = String(this.values[f.token][f.dim]);
  };

  // One matrix of the stage as a table (tables.js). Scores and weights have a column per
  // key (a token), under a header that names the rows queries and the columns keys; the
  // others have a column per dimension.
  Playground.prototype.matrix = function (name, head, values, caption) {
    var labels = this.labels.slice(0, this.count), words = this.words;
    var square = name === "scores" || name === "weights", causal = square && math.STAGES[this.stage].causal;
    var columns = square ? labels : values[0].map(function (_, d) { return String(d + 1); });
    return matrix({ name: name, head: head, values: values, caption: caption, rows: labels, columns: columns,
      axes: square ? { queries: words.axis_queries, keys: words.axis_keys } : null, words: words,
      hidden: function (i, j) { return causal && j > i; } });
  };

  Playground.prototype.draw = function (inputs) {
    var self = this, words = this.words, trained = this.stage === "trained";
    this.chapterParts.forEach(function (part) { part.hidden = trained; });
    if (this.trained) this.trained.box.hidden = !trained;
    if (trained) {
      this.drawRefused(); // hidden: the chapter's values are not the trained model's
      return this.trained.draw();
    }
    var x = this.values.slice(0, this.count);
    if (inputs) this.drawEmbeddings();
    this.drawSlider();
    this.result = math.attend(this.stage, x, this.data.stages[this.stage]);
    var many = this.result.heads.length > 1;
    // Where a stage projects, each head shows where its scores come from: q · k.
    var names = math.STAGES[this.stage].projected ? ["queries", "keys", "values"] : [];
    var parts = this.result.heads.map(function (found, h) {
      var head = many ? String(h) : null;
      var caption = function (matrix) {
        return many ? fill(words.head_matrix, { head: fill(words.head, { n: h + 1 }), matrix: words[matrix] })
          : words[matrix];
      };
      var draw = function (name) { return self.matrix(name, head, found[name], caption(name)); };
      var sources = names.length ? [element("div", { "class": "playground-qkv" }, names.map(draw))] : [];
      return element("div", { "class": "playground-head" }, sources.concat(["scores", "weights", "context"].map(draw)));
    });
    var results = [element("div", { "class": "playground-heads" }, parts)];
    if (many) results.push(this.matrix("context", null, this.result.context, words.joined));
    this.results.replaceChildren.apply(this.results, results);
    // The selected weight stays selected, in head 1 when the stage has heads, if it is still
    // there; its arithmetic is updated, not announced again (the reader is typing).
    var selected = this.selected, cell = null;
    if (selected) cell = this.cell(many ? selected.head || "0" : null, selected.row, selected.col);
    if (cell) this.choose(cell, false);
    else {
      this.selected = null;
      this.mark(null);
      this.stale.before(this.explanation);
      if (this.explanation.textContent !== words.hint) this.explanation.textContent = words.hint;
    }
    this.drawRefused();
    // One tab stop per weights table: its selected cell, else its first.
    this.results.querySelectorAll(".playground-weights").forEach(function (table) {
      (table.querySelector(".is-selected") || table.querySelector("td[data-matrix]")).tabIndex = 0;
    });
  };

  Playground.prototype.cell = function (head, row, col) {
    var selector = '[data-matrix="weights"][data-row="' + row + '"][data-col="' + col + '"]';
    if (head !== null) selector += '[data-head="' + head + '"]';
    return this.results.querySelector(selector);
  };

  // Arrow keys, Home and End move through a weights table (one tab stop per table).
  Playground.prototype.move = function (event) {
    var cell = event.target.closest('[data-matrix="weights"]');
    var steps = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (!cell) return;
    var row = Number(cell.dataset.row), col = Number(cell.dataset.col), last = this.count - 1;
    if (steps[event.key]) {
      row = Math.min(last, Math.max(0, row + steps[event.key][0]));
      col = Math.min(last, Math.max(0, col + steps[event.key][1]));
    } else if (event.key === "Home" || event.key === "End") {
      col = event.key === "Home" ? 0 : last;
    } else return;
    event.preventDefault();
    this.cell(cell.getAttribute("data-head"), row, col).focus();
  };

  document.querySelectorAll("[data-playground]").forEach(function (root) {
    new Playground(root, root.querySelector(".playground-data"));
  });
})();
