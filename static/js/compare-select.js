// The evaluation list's "Compare": the first evaluation ticked is the baseline, so the
// form sends the ticked evaluations in the order they were ticked (without this script
// they go in list order).
(function () {
  const form = document.querySelector("[data-compare-form]");
  if (!form) return;
  const ticked = [];
  form.addEventListener("change", (event) => {
    const box = event.target;
    if (box.name !== "e") return;
    const at = ticked.indexOf(box.value);
    if (at !== -1) ticked.splice(at, 1);
    if (box.checked) ticked.push(box.value);
  });
  form.addEventListener("submit", (event) => {
    const boxes = Array.from(form.querySelectorAll("input[type=checkbox][name=e]"));
    const checked = boxes.filter((box) => box.checked).map((box) => box.value);
    // Boxes ticked before the script ran (e.g. restored by the browser) go last.
    const order = ticked.filter((id) => checked.includes(id));
    checked.forEach((id) => { if (!order.includes(id)) order.push(id); });
    event.preventDefault();
    const query = new URLSearchParams(order.map((id) => ["e", id]));
    window.location.assign(form.action + "?" + query.toString());
  });
})();
