/* The embedding fields' values (playground.js mixes these into its Playground).

   A field's text is read as its language writes numbers (numbers.js). What the page cannot
   take is refused in words, on a row right under the field's (aria-describedby), and the
   matrices keep the last value that the page took, with a note above them that says so. */
(function () {
  "use strict";
  var element = window.playgroundDom.element, fill = window.playgroundDom.fill;
  var numbers = window.playgroundNumbers;

  // The cell of the row under the field's row that holds its row's refusals.
  function noteCell(input) {
    var row = input.closest("tr"), next = row.nextElementSibling;
    if (next && next.classList.contains("playground-refused")) return next.firstChild;
    var cell = element("td", { colspan: String(row.children.length) });
    row.after(element("tr", { "class": "playground-refused" }, [cell]));
    return cell;
  }

  var parts = {
    // A field's text as {value}, or {message}: why the page does not take it.
    readValue: function (text) {
      var words = this.words, limit = this.data.limit;
      var read = numbers.read(text, words.decimal);
      if (read.error === "grouping") {
        return { message: fill(words.invalid_grouping, { typed: text.trim(), decimal: read.decimal }) };
      }
      if (read.error || !(Math.abs(read.value) <= limit)) return { message: fill(words.invalid, { limit: limit }) };
      return { value: read.value };
    },

    // Say why `input`'s text is refused; or, where `message` is null, that it is not.
    refuse: function (input, message) {
      var token = Number(input.dataset.token), dim = Number(input.dataset.dim);
      var key = token + "," + dim, id = this.id + "-refused-" + token + "-" + dim;
      var note = document.getElementById(id);
      input.setAttribute("aria-invalid", String(Boolean(message)));
      if (message) {
        this.refused[key] = { token: token, dim: dim, message: message };
        if (!note) noteCell(input).append(element("p", { id: id, "data-refused": key }));
        input.setAttribute("aria-describedby", id);
      } else {
        delete this.refused[key];
        input.removeAttribute("aria-describedby");
        if (note) {
          var cell = note.parentNode;
          note.remove();
          if (!cell.children.length) cell.parentNode.remove();
        }
      }
      this.drawRefused();
    },

    // The refusals' words, and the note over the matrices: which values they still use.
    drawRefused: function () {
      var self = this, words = this.words;
      var notes = Object.keys(this.refused).sort().map(function (key) {
        var r = self.refused[key];
        var field = fill(words.value_of, { token: self.labels[r.token], dim: r.dim + 1 });
        self.embeddings.querySelector('[data-refused="' + key + '"]').textContent =
          fill(words.field_error, { field: field, message: r.message });
        return element("p", {}, [fill(words.stale, { field: field, value: String(self.values[r.token][r.dim]) })]);
      });
      // Not at the trained stage: its tables are not made of the chapter's values.
      var stale = notes.length > 0 && this.stage !== "trained";
      this.stale.replaceChildren.apply(this.stale, notes);
      this.stale.hidden = !stale;
      this.results.classList.toggle("is-stale", stale);
    },
  };

  window.playgroundFields = parts;
})();
