__version__ = "0.2.0"
USER_AGENT = f"fileshare-sdk-python/{__version__}"
