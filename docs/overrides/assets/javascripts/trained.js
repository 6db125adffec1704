/* The playground's "trained" stage: the reader types a sequence, and the model that "What
   attention learns" trains (its weights exported by the build, tools/book/trained.py) runs on
   it in the browser (induction.js). Every head's weights are drawn as a heatmap, the cells
   where an induction head looks are outlined, and the most likely next token is shown.

   playground.js owns the page; this draws the stage into its results. The markup is a
   contract for tests: CONTRIBUTING.md, "The playground's markup". */
(function () {
  "use strict";
  var induction = window.inductionModel;

  var element = window.playgroundDom.element, fill = window.playgroundDom.fill;

  // The weights file as {config, tensors}: each tensor a view into one Float32Array.
  function unpack(manifest, buffer) {
    var numbers = new Float32Array(buffer), tensors = {};
    manifest.tensors.forEach(function (t) {
      var size = t.shape.reduce(function (a, b) { return a * b; }, 1);
      tensors[t.name] = { shape: t.shape, data: numbers.subarray(t.offset, t.offset + size) };
    });
    return { config: manifest.config, tensors: tensors };
  }

  function TrainedView(playground, url) {
    var self = this, data = playground.data.trained, words = playground.words;
    this.playground = playground;
    this.data = data;
    this.words = words;
    this.url = url;
    this.model = null;
    this.limit = data.config.context_length - 1; // the start token takes one position
    this.field = element("input", {
      type: "text", "data-control": "sequence", value: data["default"], maxlength: String(this.limit),
      autocomplete: "off", autocapitalize: "off", spellcheck: "false", "aria-describedby": "trained-message",
    });
    this.message = element("p", { "class": "playground-message", id: "trained-message", "aria-live": "polite" });
    this.prediction = element("p", { "class": "playground-prediction", "aria-live": "polite" });
    this.box = element("div", { "class": "playground-trained", hidden: "" }, [
      element("label", { "class": "playground-sequence" }, [fill(words.sequence, { n: this.limit }) + " ", this.field]),
      this.message, this.prediction]);
    this.field.addEventListener("input", function () { self.draw(); });
  }

  TrainedView.prototype.reset = function () {
    this.field.value = this.data["default"];
    this.draw();
  };

  // The typed sequence as token ids after the start token, or the reason it cannot be.
  TrainedView.prototype.read = function () {
    var symbols = this.data.symbols, text = this.field.value, ids = [this.data.config.vocab_size];
    var wrong = Array.from(text).filter(function (c) { return symbols.indexOf(c) < 0; });
    if (wrong.length) return { error: fill(this.words.sequence_invalid, { chars: wrong.join(" "), symbols: symbols }) };
    if (!text.length) return { error: this.words.sequence_empty };
    if (text.length > this.limit) return { error: fill(this.words.sequence_long, { n: this.limit }) };
    Array.from(text).forEach(function (c) { ids.push(symbols.indexOf(c)); });
    return { ids: ids };
  };

  TrainedView.prototype.load = function () {
    var self = this;
    if (this.loading) return this.loading;
    this.message.textContent = this.words.loading;
    this.loading = fetch(this.url).then(function (response) {
      if (!response.ok) throw new Error(response.status + " " + response.statusText);
      return response.arrayBuffer();
    }).then(function (buffer) {
      self.model = unpack(self.data, buffer);
    });
    this.loading.catch(function (error) {
      self.message.textContent = fill(self.words.load_failed, { error: error.message });
      self.loading = null;
    });
    return this.loading;
  };

  TrainedView.prototype.draw = function () {
    var self = this, results = this.playground.results;
    if (!this.model) {
      results.replaceChildren();
      this.load().then(function () { self.draw(); });
      return;
    }
    var read = this.read();
    this.field.setAttribute("aria-invalid", String(Boolean(read.error)));
    this.message.textContent = read.error || "";
    this.message.classList.toggle("is-error", Boolean(read.error));
    if (read.error) return; // the last valid sequence stays drawn
    var found = induction.forward(this.model, read.ids);
    this.drawPrediction(read.ids, found.logits);
    var labels = read.ids.map(function (id) { return id < self.data.symbols.length ? self.data.symbols[id] : self.data.start; });
    var layers = found.weights.map(function (heads, layer) {
      var tables = heads.map(function (weights, head) { return self.heatmap(read.ids, labels, weights, layer, head); });
      return element("div", { "class": "playground-heads" }, tables);
    });
    results.replaceChildren.apply(results, [element("p", { "class": "playground-legend" }, [this.words.induction_legend])].concat(layers));
  };

  TrainedView.prototype.drawPrediction = function (ids, logits) {
    var self = this, symbols = this.data.symbols, best = induction.predict(logits, 3);
    var last = ids[ids.length - 1], name = function (id) { return id < symbols.length ? symbols[id] : self.data.start; };
    var others = best.slice(1).map(function (b) { return name(b.id) + " " + b.probability.toFixed(2); }).join(", ");
    this.prediction.replaceChildren(fill(this.words.predicted, {
      last: name(last), token: name(best[0].id), p: best[0].probability.toFixed(2), others: others }));
  };

  // One head's weights as a table; the cells of the induction pattern are outlined.
  TrainedView.prototype.heatmap = function (ids, labels, weights, layer, head) {
    var words = this.words;
    var header = [element("th", { scope: "col" })].concat(labels.map(function (l) { return element("th", { scope: "col" }, [l]); }));
    var rows = weights.map(function (row, i) {
      return element("tr", {}, [element("th", { scope: "row" }, [labels[i]])].concat(row.map(function (v, j) {
        var cell = element("td", { "data-matrix": "weights", "data-layer": layer, "data-head": head, "data-row": i, "data-col": j });
        if (j > i) {
          cell.classList.add("is-hidden");
          cell.setAttribute("data-hidden", "");
          cell.title = words.hidden;
          return cell;
        }
        cell.textContent = v.toFixed(2);
        cell.style.setProperty("--weight", String(v));
        if (induction.afterEarlierCopy(ids, i, j)) cell.classList.add("is-induction");
        return cell;
      })));
    });
    var caption = fill(words.layer_head, { layer: layer, head: head });
    return element("div", { "class": "playground-box playground-trained-box", tabindex: "0", role: "region", "aria-label": caption }, [
      element("table", { "class": "playground-weights playground-trained-weights" }, [
        element("caption", {}, [caption]), element("thead", {}, [element("tr", {}, header)]), element("tbody", {}, rows)])]);
  };

  window.TrainedView = TrainedView;
})();
