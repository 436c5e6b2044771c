"""OpenAPI at /docs, from a packaged Swagger UI: the page fetches nothing from outside."""

from __future__ import annotations

from fastapi.testclient import TestClient

from support import World


def test_the_docs_page_loads_swagger_ui_from_the_app_itself(
    client: TestClient, world: World
) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    assert "/docs/assets/swagger-ui-bundle.js" in page.text
    assert "https://" not in page.text and "http://" not in page.text
    assert "'self'" in page.headers["content-security-policy"]
    assert "https:" not in page.headers["content-security-policy"]
    script = client.get("/docs/assets/swagger-ui-bundle.js")
    assert script.status_code == 200
    assert len(script.content) > 100_000
    assert client.get("/openapi.json").json()["paths"]
