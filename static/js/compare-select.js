// The evaluation list's "Compare": the first evaluation ticked is the baseline, so the
// form sends the ticked evaluations in the order they were ticked (without this script
// they go in list order). The page loads it in the head, not deferred, and it listens on
// the document, so it hears the first ticks too: a quick hand could tick two boxes
// before a deferred script ran, and the baseline would then be whichever is listed first.
(function () {
  const ticked = [];
  document.addEventListener("change", (event) => {
    const box = event.target;
    if (box.name !== "e" || !box.closest("[data-compare-form]")) return;
    const at = ticked.indexOf(box.value);
    if (at !== -1) ticked.splice(at, 1);
    if (box.checked) ticked.push(box.value);
  });
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!form.matches("[data-compare-form]")) return;
    const boxes = Array.from(form.querySelectorAll("input[type=checkbox][name=e]"));
    const checked = boxes.filter((box) => box.checked).map((box) => box.value);
    // Boxes ticked without a change event (restored by the browser) go last.
    const order = ticked.filter((id) => checked.includes(id));
    checked.forEach((id) => { if (!order.includes(id)) order.push(id); });
    event.preventDefault();
    const query = new URLSearchParams(order.map((id) => ["e", id]));
    window.location.assign(form.action + "?" + query.toString());
  });
})();
