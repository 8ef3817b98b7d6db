// The "Copy" button of a key shown once: copies the named input's value (no inline script: the page's CSP).
document.querySelectorAll("button[data-copy]").forEach((button) => {
  button.addEventListener("click", async () => {
    const field = document.getElementById(button.dataset.copy);
    const status = button.parentElement.querySelector(".copied");
    try {
      await navigator.clipboard.writeText(field.value);
      status.textContent = "Copied.";
    } catch {
      field.select();
      status.textContent = "Selected: press Ctrl+C (or Cmd+C) to copy.";
    }
  });
});
