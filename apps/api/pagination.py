from rest_framework.pagination import PageNumberPagination


class Pages(PageNumberPagination):
    """?page=N&page_size=M (at most 500); answers {count, next, previous, results}."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500
