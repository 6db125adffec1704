/* The playground page: the reader changes the tokens, their embeddings and the stage, and
   every matrix is computed again (attention.js) and drawn. The page brings its data and its
   words in a JSON script (tools/book/playground_html.py); this replaces the static tables
   that a reader without JavaScript sees.

   Its markup is a contract for tests: CONTRIBUTING.md, "The playground's markup". */
(function () {
  "use strict";
  var math = window.attentionMath;

  var element = window.playgroundDom.element, fill = window.playgroundDom.fill;
  var fixed = math.fixed;

  function Playground(root, script) {
    this.root = root;
    this.script = script; // kept: it holds the page's data and words
    var data = (this.data = JSON.parse(script.textContent));
    this.words = data.words;
    this.stage = "3.3";
    this.selected = null; // {head, row, col} of the weight whose arithmetic is shown
    this.focused = { token: 1, dim: 0 }; // the value the slider moves: "journey", as in 3.3.1
    this.reset();
    this.build();
  }

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
    this.sliderBox = element("label", { "class": "playground-slider" }, [this.sliderLabel, this.slider]);
    // The chapter's stages show these; the trained stage shows its own box instead.
    this.chapterParts = [this.controls.children[1], this.embeddings, this.sliderBox, this.explanation];
    this.root.replaceChildren.apply(this.root, [this.script, this.controls].concat(
      this.trained ? [this.trained.box] : [], this.chapterParts.slice(1), [this.results]));
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
      var value = input.value.trim() === "" ? NaN : Number(input.value);
      var valid = isFinite(value) && Math.abs(value) <= this.data.limit;
      input.setAttribute("aria-invalid", String(!valid));
      input.title = valid ? "" : fill(words.invalid, { limit: this.data.limit });
      var dim = Number(input.dataset.dim);
      // Nothing to redraw for "change" after "input" (a redraw would replace the cell that
      // the reader is clicking, as the field loses the focus).
      if (!valid || this.values[token][dim] === value) return;
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
      for (d = 0; d < dims; d++) {
        cells.push(element("td", {}, [element("input", {
          type: "number", step: "0.01", min: -this.data.limit, max: this.data.limit,
          value: String(this.values[i][d]), "data-token": i, "data-dim": d,
          "aria-label": fill(words.value_of, { token: this.labels[i], dim: d + 1 }) })]));
      }
      rows.push(element("tr", {}, cells));
    }
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

  // One matrix as a table: rows are the tokens; columns are tokens or dimensions.
  Playground.prototype.matrix = function (name, head, values, caption, columns) {
    var self = this, labels = this.labels.slice(0, this.count);
    var causal = math.STAGES[this.stage].causal && name !== "context";
    var header = [element("th", { scope: "col" })].concat(columns.map(function (c) {
      return element("th", { scope: "col" }, [c]);
    }));
    var rows = values.map(function (row, i) {
      return element("tr", {}, [element("th", { scope: "row" }, [labels[i]])].concat(row.map(function (v, j) {
        var cell = element("td", { "data-matrix": name, "data-head": head, "data-row": i, "data-col": j }, [fixed(v)]);
        if (causal && j > i) {
          cell.classList.add("is-hidden");
          cell.setAttribute("data-hidden", "");
          cell.title = self.words.hidden;
        }
        if (name === "weights") {
          cell.style.setProperty("--weight", String(v));
          if (v > 0.5) cell.classList.add("is-strong");
          cell.tabIndex = -1;
        }
        return cell;
      })));
    });
    var table = element("table", { "class": "playground-" + name, role: name === "weights" ? "grid" : null }, [
      element("caption", {}, [caption]), element("thead", {}, [element("tr", {}, header)]),
      element("tbody", {}, rows)]);
    return element("div", { "class": "playground-box" }, [table]);
  };

  Playground.prototype.draw = function (inputs) {
    var self = this, words = this.words, trained = this.stage === "trained";
    this.chapterParts.forEach(function (part) { part.hidden = trained; });
    if (this.trained) this.trained.box.hidden = !trained;
    if (trained) return this.trained.draw();
    var x = this.values.slice(0, this.count);
    if (inputs) this.drawEmbeddings();
    this.drawSlider();
    this.result = math.attend(this.stage, x, this.data.stages[this.stage]);
    var labels = this.labels.slice(0, this.count);
    var many = this.result.heads.length > 1;
    var parts = this.result.heads.map(function (found, h) {
      var head = many ? String(h) : null;
      var caption = function (matrix) {
        return many ? fill(words.head_matrix, { head: fill(words.head, { n: h + 1 }), matrix: words[matrix] })
          : words[matrix];
      };
      var dims = found.context[0].map(function (_, d) { return String(d + 1); });
      var boxes = [
        self.matrix("scores", head, found.scores, caption("scores"), labels),
        self.matrix("weights", head, found.weights, caption("weights"), labels),
        self.matrix("context", head, found.context, caption("context"), dims)];
      return element("div", { "class": "playground-head" }, boxes);
    });
    var results = [element("div", { "class": "playground-heads" }, parts)];
    if (many) {
      var dims = this.result.context[0].map(function (_, d) { return String(d + 1); });
      results.push(this.matrix("context", null, this.result.context, words.joined, dims));
    }
    this.results.replaceChildren.apply(this.results, results);
    // The selected weight stays selected, in head 1 when the stage has heads, if it is still
    // there; its arithmetic is updated, not announced again (the reader is typing).
    var selected = this.selected, cell = null;
    if (selected) cell = this.cell(many ? selected.head || "0" : null, selected.row, selected.col);
    if (cell) this.choose(cell, false);
    else {
      this.selected = null;
      if (this.explanation.textContent !== words.hint) this.explanation.textContent = words.hint;
    }
    // One tab stop per weights table: its selected cell, else its first.
    this.results.querySelectorAll(".playground-weights").forEach(function (table) {
      (table.querySelector(".is-selected") || table.querySelector("td")).tabIndex = 0;
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

  // Show the arithmetic behind one weight; announce it unless `announce` is false.
  Playground.prototype.choose = function (cell, announce) {
    var words = this.words, head = cell.getAttribute("data-head");
    var row = Number(cell.dataset.row), col = Number(cell.dataset.col);
    this.results.querySelectorAll('[data-matrix="weights"]').forEach(function (other) {
      if (other.getAttribute("data-head") === head) other.tabIndex = -1;
      other.classList.toggle("is-selected", other === cell);
    });
    cell.tabIndex = 0;
    this.selected = { head: head, row: row, col: col };
    var found = this.result.heads[head === null ? 0 : Number(head)];
    var steps = math.explain(found, row, col);
    var names = { query: this.labels[row], key: this.labels[col] };
    var lines = []; // [text, is a formula]
    if (head !== null) lines.push([fill(words.head, { n: Number(head) + 1 }), false]);
    if (steps.hidden) {
      lines.push([fill(words.explain_hidden, names), false]);
    } else {
      var shown = math.formulas(steps, names, math.STAGES[this.stage].projected);
      lines.push([fill(words.explain_score, names), false], [shown.score, true]);
      if (shown.scale) lines.push([fill(words.explain_scale, { d: found.keys[0].length }), false], [shown.scale, true]);
      lines.push([fill(shown.shift ? words.explain_softmax_shifted : words.explain_softmax,
        { query: names.query, max: fixed(shown.shift) }), false], [shown.softmax, true]);
    }
    this.explanation.setAttribute("aria-live", announce === false ? "off" : "polite");
    this.explanation.replaceChildren.apply(this.explanation, lines.map(function (line) {
      return element("p", { "class": line[1] ? "playground-math" : null }, [line[0]]);
    }));
  };

  document.querySelectorAll("[data-playground]").forEach(function (root) {
    new Playground(root, root.querySelector(".playground-data"));
  });
})();
