// The data export page while an export is under way: reload it every few seconds to show its progress, unless the
// person unticks "Update automatically" (a time limit they can turn off). No inline script: the page's CSP.
const toggle = document.getElementById("auto-refresh");
if (toggle) {
  const seconds = Number(toggle.dataset.seconds) || 5;
  setInterval(() => {
    if (toggle.checked) {
      window.location.replace(toggle.dataset.url);
    }
  }, seconds * 1000);
}
