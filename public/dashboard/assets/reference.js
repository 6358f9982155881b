import { initPage, reportLoadError } from './common.js'

// SwaggerUIBundle comes from assets/swagger-ui/swagger-ui-bundle.js, served by this service.
initPage()
  .then(() => {
    window.SwaggerUIBundle({
      url: '../api/v1/openapi.json',
      domNode: document.getElementById('swagger-ui'),
      // No request to the public validator service: the dashboard makes no outside requests.
      validatorUrl: null,
      deepLinking: false,
      tryItOutEnabled: false,
      onComplete: () => document.body.setAttribute('data-ready', 'true'),
    })
  })
  .catch(reportLoadError)
