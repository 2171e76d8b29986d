// The dashboard's only script: copy buttons. Pages work without it.
document.addEventListener('click', function (event) {
  var button = event.target.closest('button[data-copy]');
  if (!button) return;
  var field = document.getElementById(button.getAttribute('data-copy'));
  if (!field) return;
  var done = function () {
    button.textContent = 'Copied';
    setTimeout(function () {
      button.textContent = 'Copy';
    }, 2000);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(field.value).then(done, function () {
      field.select();
    });
  } else {
    field.select();
    document.execCommand('copy');
    done();
  }
});
