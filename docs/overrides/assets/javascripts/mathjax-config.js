// MathJax 3 typesets two kinds of math on this site:
// - Markdown pages and docstrings: pymdownx.arithmatex wraps TeX in \( \) or \[ \] inside
//   elements of class "arithmatex";
// - notebook pages: Markdown cells keep the $...$ and $$...$$ that Jupyter users write.
// Code and notebook outputs sit in <pre> and <code>, which MathJax always skips.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"], ["$", "$"]],
    displayMath: [["\\[", "\\]"], ["$$", "$$"]],
    processEscapes: true,
    processEnvironments: true,
  },
  options: {
    // Page chrome (header, navigation, search, footer) never holds math.
    ignoreHtmlClass: "md-header|md-sidebar|md-search|md-footer|md-tabs|tex2jax_ignore",
  },
  svg: { fontCache: "global" },
};

// Material can swap page content without a reload; typeset whatever is new each time.
if (typeof document$ !== "undefined") {
  document$.subscribe(() => {
    if (window.MathJax.typesetPromise) {
      MathJax.typesetClear();
      MathJax.texReset();
      MathJax.typesetPromise();
    }
  });
}
