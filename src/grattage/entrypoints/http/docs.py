"""OpenAPI at ``/docs`` with Swagger UI from the ``swagger-ui-bundle-v2`` package, so the docs
page loads nothing from outside (no CDN) and keeps a strict Content-Security-Policy."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from swagger_ui_bundle import swagger_ui_path

ASSETS = "/docs/assets"


def mount_docs(app: FastAPI) -> None:
    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title="grattage — API",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url="/img/favicon.svg",
        )

    app.mount(ASSETS, StaticFiles(directory=str(swagger_ui_path)), name="docs-assets")
