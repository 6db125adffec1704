/* The arithmetic of the playground page: chapter 3's attention, on a few tokens, in plain
   JavaScript numbers (float64). The page runs it on every change; the build runs it in Node
   beside the package on the same inputs (tools/book/playground_check.py), so what the page
   shows is what `attention_mechanisms` computes, to float32 rounding.

   A matrix is an array of rows. `x` is (T, d_in): one row per token. Weights are given as
   the book writes them, (d_in, d_out), so that queries = x @ W_query. */
(function (root, factory) {
  if (typeof module === "object" && module.exports) module.exports = factory();
  else root.attentionMath = factory();
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  // What each stage of the chapter computes: how many heads, whether the queries, keys and
  // values are projected, whether scores are divided by sqrt(d_k), whether the future hides.
  var STAGES = {
    "3.3": { heads: 1, projected: false, scaled: false, causal: false },
    "3.4": { heads: 1, projected: true, scaled: true, causal: false },
    "3.5": { heads: 1, projected: true, scaled: true, causal: true },
    "3.6": { heads: 2, projected: true, scaled: true, causal: true },
  };

  function dot(u, v) {
    var sum = 0;
    for (var d = 0; d < u.length; d++) sum += u[d] * v[d];
    return sum;
  }

  function column(m, j) {
    return m.map(function (row) { return row[j]; });
  }

  // (n, k) @ (k, m) -> (n, m)
  function matmul(a, b) {
    var columns = b[0].map(function (_, j) { return column(b, j); });
    return a.map(function (row) {
      return columns.map(function (col) { return dot(row, col); });
    });
  }

  // Stable softmax of one row: subtract the largest entry first; -Infinity gives 0.
  function softmax(row) {
    var top = Math.max.apply(null, row);
    var exps = row.map(function (s) { return Math.exp(s - top); });
    var total = exps.reduce(function (a, b) { return a + b; }, 0);
    return exps.map(function (e) { return e / total; });
  }

  // True where query i may not see key j: the key comes after the query.
  function hidden(causal, i, j) {
    return causal && j > i;
  }

  // One head: scores (unscaled, -Infinity where hidden), weights and context vectors.
  function head(stage, x, weights) {
    var q = stage.projected ? matmul(x, weights.W_query) : x; // (T, d_out)
    var k = stage.projected ? matmul(x, weights.W_key) : x;
    var v = stage.projected ? matmul(x, weights.W_value) : x;
    var scale = stage.scaled ? Math.sqrt(k[0].length) : 1; // sqrt(d_k)
    var scores = q.map(function (qi, i) {
      return k.map(function (kj, j) { return hidden(stage.causal, i, j) ? -Infinity : dot(qi, kj); });
    }); // (T, T)
    var attn = scores.map(function (row) {
      return softmax(row.map(function (s) { return s / scale; }));
    }); // (T, T), each row sums to 1
    return { queries: q, keys: k, values: v, scale: scale, scores: scores,
             weights: attn, context: matmul(attn, v) };
  }

  /**
   * Run a stage of chapter 3 on the tokens `x`.
   * @param {string} name "3.3", "3.4", "3.5" or "3.6".
   * @param {number[][]} x (T, d_in) embeddings.
   * @param {Array} heads One {W_query, W_key, W_value} per head; null for 3.3.
   * @returns {{heads: object[], context: number[][]}} Each head's matrices, and the
   *   context vectors of all heads joined side by side, (T, heads * d_out).
   */
  function attend(name, x, heads) {
    var stage = STAGES[name];
    if (!stage) throw new Error("stage must be one of " + Object.keys(STAGES) + "; got " + name);
    var results = [];
    for (var h = 0; h < stage.heads; h++) results.push(head(stage, x, heads && heads[h]));
    var context = x.map(function (_, i) {
      return [].concat.apply([], results.map(function (r) { return r.context[i]; }));
    });
    return { heads: results, context: context };
  }

  // The arithmetic behind weight (i, j) of one head's result, for the page to spell out.
  function explain(result, i, j) {
    var row = result.scores[i].map(function (s) { return s / result.scale; });
    var top = Math.max.apply(null, row);
    var exps = row.map(function (s) { return Math.exp(s - top); });
    return {
      hidden: result.scores[i][j] === -Infinity,
      terms: result.queries[i].map(function (qd, d) { return [qd, result.keys[j][d]]; }),
      score: result.scores[i][j],
      scale: result.scale,
      scaled: row[j],
      row: row,
      max: top,
      exps: exps,
      total: exps.reduce(function (a, b) { return a + b; }, 0),
      weight: result.weights[i][j],
    };
  }

  // A value as the page shows it: four decimals, "-inf" for a hidden score.
  function fixed(value) {
    return value === -Infinity ? "-inf" : value.toFixed(4);
  }

  // The arithmetic of `explain` as three lines of numbers, in no language: the dot product
  // term by term, the division by sqrt(d_k) (null where the stage does not scale), and the
  // softmax of the row, with the largest score subtracted when it is large (`shift`).
  function formulas(steps, names, projected) {
    var v = projected ? ["q", "k"] : ["x", "x"];
    var shift = Math.abs(steps.max) > 20 ? steps.max : 0;
    var exp = function (s) { return "exp(" + fixed(s - shift) + ")"; };
    var visible = steps.row.filter(function (s) { return s !== -Infinity; });
    return {
      score: v[0] + "(" + names.query + ") · " + v[1] + "(" + names.key + ") = " +
        steps.terms.map(function (t) { return fixed(t[0]) + " × " + fixed(t[1]); }).join(" + ") +
        " = " + fixed(steps.score),
      scale: steps.scale === 1 ? null :
        fixed(steps.score) + " / " + fixed(steps.scale) + " = " + fixed(steps.scaled),
      shift: shift,
      softmax: exp(steps.scaled) + " / (" + visible.map(exp).join(" + ") + ") = " +
        fixed(Math.exp(steps.scaled - shift)) + " / " + fixed(steps.total * Math.exp(steps.max - shift)) +
        " = " + fixed(steps.weight),
    };
  }

  return { STAGES: STAGES, attend: attend, explain: explain, formulas: formulas, fixed: fixed,
           softmax: softmax, matmul: matmul };
});
