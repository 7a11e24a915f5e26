/* MathJax 2's one call that the widget manager makes, answered by MathJax 3.

   The Jupyter widgets manager (vendor/site/widgets/embed.js, @jupyter-widgets/html-manager
   1.0) typesets every label it draws with MathJax 2's API,
   MathJax.Hub.Queue(["Typeset", MathJax.Hub, element]), as soon as window.MathJax exists.
   The site loads MathJax 3 (vendor/site/mathjax), which has no Hub, so every labelled
   control of an explorer threw "Cannot read properties of undefined (reading 'Queue')".

   Here MathJax.Hub.Queue queues the elements it is given and MathJax 3 typesets them
   (MathJax.typesetPromise) once it has started, after its own first pass over the page.
   A page without formulas loads no MathJax (Sphinx adds it only where there is math),
   so window.MathJax is undefined there and the manager typesets nothing. */
(function () {
  "use strict";
  const config = window.MathJax;
  if (!config) return;
  const waiting = [];
  let started = false;

  function typesetWaiting() {
    if (!started || !waiting.length) return;
    const elements = waiting.splice(0);
    MathJax.startup.promise = MathJax.startup.promise
      .then(() => MathJax.typesetPromise(elements))
      .catch((err) => console.warn("MathJax could not typeset a widget label:", err));
  }

  const hub = {
    Queue(...jobs) {
      for (const job of jobs) {
        if (Array.isArray(job) && job[0] === "Typeset" && job[2] instanceof Element) waiting.push(job[2]);
      }
      typesetWaiting();
    },
  };

  config.Hub = hub;  // calls before MathJax 3 has loaded: window.MathJax is still this configuration
  if (config.version) {  // MathJax 3 already running (Sphinx defers it, so not expected)
    started = true;
    return;
  }
  // MathJax 3 replaces window.MathJax by itself when it loads; its startup.ready hook puts the Hub back.
  const startup = (config.startup = config.startup || {});
  const ready = startup.ready;
  startup.ready = function () {
    if (ready) ready.call(this);
    else MathJax.startup.defaultReady();
    MathJax.Hub = hub;
    started = true;
    typesetWaiting();
  };
})();
