/* The arithmetic of a selected weight (playground.js mixes these into its Playground).

   The explanation opens right under the weights table of the selected cell, and where it
   ends below the screen or starts under the page's header (a phone), the page scrolls just
   enough to show it. The rows that the weight comes from are marked: its query's and its
   key's, in the queries and keys tables (3.4 to 3.6) or in the embeddings (3.3). */
(function () {
  "use strict";
  var math = window.attentionMath;
  var element = window.playgroundDom.element, fill = window.playgroundDom.fill;
  var fixed = math.fixed;

  // The row of token `row` in the table that holds the queries (or keys) of `head`.
  function sourceRow(playground, matrix, head, row) {
    if (!math.STAGES[playground.stage].projected) {
      return playground.embeddings.querySelector('[data-dim="0"][data-token="' + row + '"]').closest("tr");
    }
    var selector = '[data-matrix="' + matrix + '"][data-row="' + row + '"]';
    if (head !== null) selector += '[data-head="' + head + '"]';
    return playground.results.querySelector(selector).closest("tr");
  }

  var parts = {
    // Mark the query row and the key row of the `selected` weight ({head, row, col}), or
    // none where it is null.
    mark: function (selected) {
      this.root.querySelectorAll("tr.is-query, tr.is-key").forEach(function (tr) {
        tr.classList.remove("is-query", "is-key");
      });
      if (!selected) return;
      sourceRow(this, "queries", selected.head, selected.row).classList.add("is-query");
      sourceRow(this, "keys", selected.head, selected.col).classList.add("is-key");
    },

    // Scroll the least that shows the whole explanation, with a little room, below the
    // page's header (or its top, where it is taller than the screen). Whole pixels, up to
    // the room: a box's edges can fall between two.
    reveal: function () {
      var room = 8, header = document.querySelector(".md-header");
      var top = (header ? header.getBoundingClientRect().bottom : 0) + room;
      var box = this.explanation.getBoundingClientRect();
      var below = box.bottom + room - window.innerHeight, above = box.top - top;
      var by = above < 0 ? Math.floor(above) : below > 0 ? Math.ceil(Math.min(below, above)) : 0;
      if (by) window.scrollBy(0, by);
    },

    // Show the arithmetic behind one weight; announce it and bring it into view unless
    // `announce` is false (a redraw while the reader types).
    choose: function (cell, announce) {
      var words = this.words, head = cell.getAttribute("data-head");
      var row = Number(cell.dataset.row), col = Number(cell.dataset.col);
      this.results.querySelectorAll('[data-matrix="weights"]').forEach(function (other) {
        if (other.getAttribute("data-head") === head) other.tabIndex = -1;
        other.classList.toggle("is-selected", other === cell);
      });
      cell.tabIndex = 0;
      this.selected = { head: head, row: row, col: col };
      this.mark(this.selected);
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
      var box = cell.closest(".playground-box");
      if (box.nextElementSibling !== this.explanation) box.after(this.explanation);
      this.explanation.setAttribute("aria-live", announce === false ? "off" : "polite");
      this.explanation.replaceChildren.apply(this.explanation, lines.map(function (line) {
        return element("p", { "class": line[1] ? "playground-math" : null }, [line[0]]);
      }));
      if (announce !== false) this.reveal();
    },
  };

  window.playgroundExplain = parts;
})();
