// A field at fault, marked so that every reader knows which: aria-invalid on the field, and the
// message tied to it through aria-describedby (kept beside the field's own hint, if any).

function describedBy(element, id, on) {
  const ids = (element.getAttribute('aria-describedby') ?? '').split(' ').filter((value) => value && value !== id)
  if (on) ids.push(id)
  if (ids.length > 0) element.setAttribute('aria-describedby', ids.join(' '))
  else element.removeAttribute('aria-describedby')
}

/** Shows `message` in `errorElement` (which needs an id) and marks `fields` as at fault; focus goes to the first. */
export function markFields(errorElement, message, fields) {
  errorElement.textContent = message
  for (const field of fields) {
    field.setAttribute('aria-invalid', 'true')
    describedBy(field, errorElement.id, true)
  }
  fields[0]?.focus()
}

/** Clears the message and every mark that points at it, in `form`. */
export function clearMarks(form, errorElement) {
  errorElement.textContent = ''
  for (const field of form.querySelectorAll('[aria-invalid]')) {
    field.removeAttribute('aria-invalid')
    describedBy(field, errorElement.id, false)
  }
}
