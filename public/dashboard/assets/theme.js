// The colour theme: light, dark, or the system's (prefers-color-scheme), as the holder chose it with
// the header's "Colour theme" choice, remembered in this browser (localStorage).
// A classic script in <head>, not a module: it runs before the body is drawn, so a page never
// flashes in the other theme first. dashboard.css reads <html data-theme>; no attribute: the system's.
{
  const KEY = 'fileshare-theme'
  const CHOICES = ['light', 'dark']

  const stored = () => {
    try {
      const value = localStorage.getItem(KEY)
      return CHOICES.includes(value) ? value : 'system'
    } catch {
      // Storage off (a privacy setting): the system's theme, and the choice lasts for this page only.
      return 'system'
    }
  }

  const apply = (choice) => {
    if (CHOICES.includes(choice)) document.documentElement.dataset.theme = choice
    else delete document.documentElement.dataset.theme
  }

  apply(stored())

  document.addEventListener('DOMContentLoaded', () => {
    const select = document.getElementById('theme-choice')
    if (!select) return
    select.value = stored()
    select.addEventListener('change', () => {
      try {
        if (select.value === 'system') localStorage.removeItem(KEY)
        else localStorage.setItem(KEY, select.value)
      } catch {
        // Not remembered; still applied below.
      }
      apply(select.value)
    })
  })

  // A choice made in another tab applies in this one too.
  window.addEventListener('storage', (event) => {
    if (event.key !== KEY && event.key !== null) return
    const choice = stored()
    apply(choice)
    const select = document.getElementById('theme-choice')
    if (select) select.value = choice
  })
}
