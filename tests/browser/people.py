"""The people of the browser tests: one password for all, and logging in as a person does."""

PASSWORD = "a-long-test-password"


def log_in(page, base_url, email):
    page.goto(f"{base_url}/accounts/login/")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
