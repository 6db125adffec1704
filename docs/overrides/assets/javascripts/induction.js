/* The trained model of "What attention learns" (attention_mechanisms.induction), run in
   plain JavaScript numbers (float64): token embeddings, residual attention blocks that
   compute what RotaryMultiHeadAttention computes (queries and keys turned by their
   positions, as apply_rope does), and the output head. The page runs
   it on the sequence the reader types; the build runs it in Node beside the package on
   random sequences (tools/book/playground_check.py), so what the page shows is what the
   package computes, to float32 rounding.

   `model` is {config, tensors}: config holds vocab_size, context_length, d_model,
   num_heads, num_layers and rope_base; tensors maps each state_dict name to {shape, data}, data a flat
   array in row order. nn.Linear keeps its weight as (out, in): y = x W^T + b. */
(function (root, factory) {
  if (typeof module === "object" && module.exports) module.exports = factory();
  else root.inductionModel = factory();
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  // A flat array in row order as an array of rows.
  function rows(tensor) {
    var width = tensor.shape[tensor.shape.length - 1], out = [];
    for (var i = 0; i < tensor.data.length; i += width) out.push(Array.prototype.slice.call(tensor.data, i, i + width));
    return out;
  }

  // nn.Linear: x (T, in) -> (T, out), with weight (out, in) and an optional bias (out).
  function linear(x, weight, bias) {
    return x.map(function (xi) {
      return weight.map(function (w, o) {
        var sum = 0;
        for (var d = 0; d < xi.length; d++) sum += xi[d] * w[d];
        return bias ? sum + bias[o] : sum;
      });
    });
  }

  // Stable softmax of one row; -Infinity gives 0.
  function softmax(row) {
    var top = Math.max.apply(null, row);
    var exps = row.map(function (s) { return Math.exp(s - top); });
    var total = exps.reduce(function (a, b) { return a + b; }, 0);
    return exps.map(function (e) { return e / total; });
  }

  // apply_rope on every head of rows (T, d): in each head, feature k and feature
  // k + headDim / 2 form a pair, turned at position t by the angle t * base^(-2k / headDim).
  function rotate(rows, numHeads, base) {
    var headDim = rows[0].length / numHeads, half = headDim / 2;
    return rows.map(function (row, t) {
      var out = row.slice();
      for (var from = 0; from < row.length; from += headDim) {
        for (var k = 0; k < half; k++) {
          var angle = t * Math.pow(base, -2 * k / headDim), a = row[from + k], b = row[from + k + half];
          out[from + k] = a * Math.cos(angle) - b * Math.sin(angle);
          out[from + k + half] = b * Math.cos(angle) + a * Math.sin(angle);
        }
      }
      return out;
    });
  }

  // One RotaryMultiHeadAttention block on x (T, d): every head's weights (h, T, T) and the output.
  function block(p, x, numHeads, base) {
    var queries = rotate(linear(x, p.W_query), numHeads, base), keys = rotate(linear(x, p.W_key), numHeads, base);
    var values = linear(x, p.W_value), headDim = queries[0].length / numHeads, weights = [];
    var context = x.map(function () { return []; }); // (T, d): the heads side by side
    for (var h = 0; h < numHeads; h++) {
      var from = h * headDim, to = from + headDim;
      var w = queries.map(function (q, i) {
        return softmax(keys.map(function (k, j) {
          if (j > i) return -Infinity; // the causal mask: a key after the query is hidden
          var s = 0;
          for (var d = from; d < to; d++) s += q[d] * k[d];
          return s / Math.sqrt(headDim);
        }));
      });
      weights.push(w);
      w.forEach(function (row, i) {
        for (var d = from; d < to; d++) {
          var s = 0;
          for (var j = 0; j < row.length; j++) s += row[j] * values[j][d];
          context[i].push(s);
        }
      });
    }
    return { weights: weights, out: linear(context, p.out_proj_weight, p.out_proj_bias) };
  }

  // The tensors as rows, once per model.
  function prepare(model) {
    if (model.prepared) return model.prepared;
    var t = model.tensors, c = model.config, blocks = [];
    for (var l = 0; l < c.num_layers; l++) {
      var name = "blocks." + l + ".";
      blocks.push({
        W_query: rows(t[name + "W_query.weight"]), W_key: rows(t[name + "W_key.weight"]),
        W_value: rows(t[name + "W_value.weight"]), out_proj_weight: rows(t[name + "out_proj.weight"]),
        out_proj_bias: Array.prototype.slice.call(t[name + "out_proj.bias"].data),
      });
    }
    model.prepared = { tok: rows(t["tok_emb.weight"]), out: rows(t["out_head.weight"]), blocks: blocks };
    return model.prepared;
  }

  /**
   * Run the model on token ids (the start token first, if wanted).
   * @returns {{weights: number[][][][], logits: number[][]}} weights[layer][head] is (T, T);
   *   logits is (T, vocab_size): the scores of the token after each position.
   */
  function forward(model, ids) {
    var p = prepare(model), c = model.config;
    if (ids.length < 1 || ids.length > c.context_length) {
      throw new Error("ids must hold 1 to " + c.context_length + " tokens; got " + ids.length);
    }
    var x = ids.map(function (id) {
      if (!(id >= 0 && id <= c.vocab_size && id === Math.floor(id))) {
        throw new Error("ids must be in [0, " + c.vocab_size + "]; got " + id);
      }
      return p.tok[id].slice();
    });
    var weights = [];
    p.blocks.forEach(function (params) {
      var found = block(params, x, c.num_heads, c.rope_base);
      weights.push(found.weights);
      x = x.map(function (row, i) { return row.map(function (v, d) { return v + found.out[i][d]; }); });
    });
    return { weights: weights, logits: linear(x, p.out) };
  }

  // The most likely next tokens after the last position: [{id, probability}], best first.
  function predict(logits, count) {
    var probabilities = softmax(logits[logits.length - 1]);
    return probabilities.map(function (pr, id) { return { id: id, probability: pr }; })
      .sort(function (a, b) { return b.probability - a.probability; }).slice(0, count || 3);
  }

  // Where the induction pattern is: key j comes right after an earlier copy of query i's token.
  function afterEarlierCopy(ids, i, j) {
    return j >= 1 && j <= i && ids[j - 1] === ids[i] && j - 1 < i;
  }

  return { forward: forward, predict: predict, softmax: softmax, afterEarlierCopy: afterEarlierCopy };
});
