/* The playground's matrices as tables (playground.js draws them): a value in each cell, its
   colour on a scale, and headers that say what the rows and the columns are.

   The scale: a weight (0 to 1) fills its cell with that much of the primary colour; any
   other matrix is scaled by its largest magnitude, positive values in the primary colour and
   negative ones in orange. playground.css caps how much colour a cell takes in each scheme,
   so that the text keeps 4.5:1 against it (tests/browser/test_playground_view.py). */
(function () {
  "use strict";
  var element = window.playgroundDom.element;
  var fixed = window.attentionMath.fixed;

  // How far each value is along its matrix's scale, from -1 to 1 (hidden scores: 0).
  function heats(name, values) {
    var shown = [].concat.apply([], values).filter(isFinite);
    var top = name === "weights" ? 1 : Math.max.apply(null, shown.map(Math.abs).concat([0]));
    return values.map(function (row) {
      return row.map(function (v) { return isFinite(v) && top > 0 ? v / top : 0; });
    });
  }

  // The header rows: the columns' names, and for scores and weights ("keys" in `axes`) a
  // first row naming the columns keys, with the rows' header naming them queries.
  function header(columns, axes) {
    var names = [element("th", { scope: "col" }, axes ? [axes.queries] : [])];
    var rows = [element("tr", {}, names.concat(columns.map(function (c) {
      return element("th", { scope: "col" }, [c]);
    })))];
    if (axes) {
      rows.unshift(element("tr", { "class": "playground-axis" }, [element("td"),
        element("th", { scope: "colgroup", colspan: String(columns.length) }, [axes.keys])]));
    }
    return element("thead", {}, rows);
  }

  /**
   * One matrix as a table in its scrolling box: rows are the tokens (`rows`), columns are
   * tokens or dimensions (`columns`).
   * @param {object} m {name, head, values, caption, rows, columns, axes (or null), hidden
   *   (a function of row and column: whether the causal mask hides the cell), words}.
   */
  function matrix(m) {
    var scale = heats(m.name, m.values);
    var body = m.values.map(function (row, i) {
      return element("tr", {}, [element("th", { scope: "row" }, [m.rows[i]])].concat(row.map(function (v, j) {
        var cell = element("td", { "data-matrix": m.name, "data-head": m.head, "data-row": i, "data-col": j }, [fixed(v)]);
        if (m.hidden(i, j)) {
          cell.classList.add("is-hidden");
          cell.setAttribute("data-hidden", "");
          cell.title = m.words.hidden;
        } else {
          cell.style.setProperty("--heat", String(Math.abs(scale[i][j])));
          if (scale[i][j] < 0) cell.classList.add("is-negative");
        }
        if (m.name === "weights") cell.tabIndex = -1;
        return cell;
      })));
    });
    var table = element("table", { "class": "playground-" + m.name, role: m.name === "weights" ? "grid" : null }, [
      element("caption", {}, [m.caption]), header(m.columns, m.axes), element("tbody", {}, body)]);
    return element("div", { "class": "playground-box" }, [table]);
  }

  window.playgroundTables = { matrix: matrix };
})();
